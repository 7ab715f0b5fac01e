// How long the engine waits for an agent's late OTLP spans after a conversation's last answer, in ms; null: the default.
export default /* sql */ `
ALTER TABLE environments ADD COLUMN trace_wait_ms INTEGER;
`;
