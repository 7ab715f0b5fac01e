// Deliveries are shared fairly among endpoints: claims go round the endpoints (least recently
// claimed first), and an endpoint whose attempts fail is paused between attempts (1 s, doubling, up
// to 5 min, reset by a success), so that dead receivers cannot hold the slots of healthy ones.
export default /* sql */ `
ALTER TABLE webhooks ADD COLUMN consecutive_failures INTEGER NOT NULL DEFAULT 0;
ALTER TABLE webhooks ADD COLUMN paused_until TEXT;
ALTER TABLE webhooks ADD COLUMN last_claimed_at TEXT;
`;
