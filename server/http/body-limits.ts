/** Request bodies at most this large, on every route but the one that takes specs. */
export const BODY_LIMIT = 1024 * 1024;
/** A spec may carry its tables (up to 10,000 rows): its route takes more. */
export const SPEC_BODY_LIMIT = 5 * 1024 * 1024;
