// Which agent a run reaches: an environment may name other URLs its agent may be reached at (a
// pattern), and a run records the URL it called (the environment's, filled from its source, or a
// deployment's).
export default /* sql */ `
ALTER TABLE environments ADD COLUMN url_pattern TEXT;
ALTER TABLE runs ADD COLUMN agent_url TEXT;
`;
