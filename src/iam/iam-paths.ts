/** The original's IAM API prefix: `/kapis/iam.<platform>.io/v1alpha2`. */
export function iamPrefix(platformName: string): string {
  return `/kapis/iam.${platformName}.io/v1alpha2`;
}
