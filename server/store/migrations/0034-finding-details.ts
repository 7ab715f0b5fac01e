// What a finding names beside its category: its OWASP LLM and Agentic ids, its MITRE ATLAS technique,
// how it was found, and the attack of a security library probe (one JSON object; null for older findings).
export default /* sql */ `
ALTER TABLE findings ADD COLUMN details TEXT;
`;

/** On PostgreSQL every text column compares bytewise, as SQLite's do. */
export const postgres = /* sql */ `
ALTER TABLE findings ADD COLUMN details TEXT COLLATE "C";
`;
