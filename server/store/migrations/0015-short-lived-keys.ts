// Short-lived keys: a key may expire, and one issued to a workflow records who asked for it (the
// repository, workflow and run of its GitHub OIDC token).
export default /* sql */ `
ALTER TABLE api_keys ADD COLUMN expires_at TEXT;
ALTER TABLE api_keys ADD COLUMN issued_for TEXT;
`;
