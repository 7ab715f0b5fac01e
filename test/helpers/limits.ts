/** Tests set the limits they exercise: every rate limit is off unless `env` sets it. */
export const LIMITS_OFF = {
  ASSURE_RATE_LIMIT_PER_MINUTE: "0",
  ASSURE_UNAUTHENTICATED_PER_MINUTE: "0",
  ASSURE_PUBLIC_PER_MINUTE: "0",
  ASSURE_GITHUB_WEBHOOKS_PER_MINUTE: "0",
  ASSURE_RUN_CREATES_PER_MINUTE: "0",
};
