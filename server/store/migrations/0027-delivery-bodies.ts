// A GitHub delivery is the same delivery under another id when its signed body is the same:
// deliveries are kept once per id and once per body (SHA-256 of the payload).
export default /* sql */ `
ALTER TABLE github_deliveries ADD COLUMN body_sha256 TEXT;
CREATE UNIQUE INDEX github_deliveries_by_body ON github_deliveries (body_sha256) WHERE body_sha256 IS NOT NULL;
`;
