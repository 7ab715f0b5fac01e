import { defineDetector } from "./define.js";

const CREDENTIAL =
  /\bAKIA[0-9A-Z]{16}\b|\bgh[pousr]_[A-Za-z0-9]{36,}\b|\bgithub_pat_[A-Za-z0-9_]{40,}\b|\bsk-(?:proj-|ant-)?[A-Za-z0-9_-]{20,}\b|\bxox[abposr]-[A-Za-z0-9-]{10,}\b|\bAIza[0-9A-Za-z_-]{35}\b|\b[rs]k_live_[0-9A-Za-z]{20,}\b|-----BEGIN [A-Z ]*PRIVATE KEY-----/;

export const credential = defineDetector({
  name: "credential",
  title: "API key, token or private key in agent output",
  severity: "high",
  find: (text) => CREDENTIAL.test(text),
});
