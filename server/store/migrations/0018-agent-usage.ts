// What the agent's answers reported of their tokens over a run, summed when the run ends (JSON:
// answers, answers_without_usage, input_tokens, output_tokens, total_tokens): the evidence shows it.
export default /* sql */ `
ALTER TABLE runs ADD COLUMN agent_usage TEXT;
`;
