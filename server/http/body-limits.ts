/** Request bodies at most this large by default (ASSURE_MAX_BODY_BYTES): run creations and every other small body. */
export const DEFAULT_BODY_LIMIT = 64 * 1024;
/** A spec may carry its tables (up to 10,000 rows): its route takes more by default (ASSURE_MAX_SPEC_BYTES). */
export const DEFAULT_SPEC_BODY_LIMIT = 5 * 1024 * 1024;
