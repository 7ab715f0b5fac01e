// What an environment's models cost (JSON: model → prices per million tokens), and the prices a run
// was started with, so what it cost stays what it was when the environment's prices change.
export default /* sql */ `
ALTER TABLE environments ADD COLUMN pricing TEXT NOT NULL DEFAULT '{}';
ALTER TABLE runs ADD COLUMN pricing TEXT;
`;
