/**
 * A duration as Go's `time.Duration.String()` writes it (`5m0s`, `1h0m0s`, `30s`, `500ms`), which the
 * original puts in its ingress queries' ranges; PromQL reads the same text.
 */
export function goDurationText(seconds: number): string {
  if (seconds === 0) return '0s';
  if (seconds < 1) return `${Math.round(seconds * 1000)}ms`;
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = Math.round((seconds % 60) * 1e9) / 1e9;
  if (h > 0) return `${h}h${m}m${s}s`;
  if (m > 0) return `${m}m${s}s`;
  return `${s}s`;
}
