// How fast an environment's agent may be called, across every run against it: at most
// max_concurrency calls at once, and at most rate_limit_per_minute (null: no rate limit).
export default /* sql */ `
ALTER TABLE environments ADD COLUMN max_concurrency INTEGER NOT NULL DEFAULT 16;
ALTER TABLE environments ADD COLUMN rate_limit_per_minute INTEGER;
`;
