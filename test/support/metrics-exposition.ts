/** The sum of a metric's samples whose labels include `labels`, read from a Prometheus text exposition. */
export function sampleSum(exposition: string, name: string, labels: Record<string, string>): number {
  let sum = 0;
  for (const line of exposition.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    const labelText = line.slice(name.length + 1, line.lastIndexOf('}'));
    if (Object.entries(labels).every(([k, v]) => labelText.includes(`${k}="${v}"`)))
      sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}
