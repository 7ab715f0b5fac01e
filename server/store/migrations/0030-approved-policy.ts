// A policy approval approves the policy changes it saw: kept with their content address, it lifts
// the gate `policy` only while the decision's changes are those (a new base, or a new head's, are not).
export default /* sql */ `
ALTER TABLE waivers ADD COLUMN policy_hash TEXT;
`;
