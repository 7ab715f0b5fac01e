import { defineDetector } from "./define.js";

// Bounded repetitions keep the work per position constant: linear in the text, whatever it holds.
const EMAIL = /[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63}){0,8}\.[A-Za-z]{2,24}\b/;

export const emailAddress = defineDetector({
  name: "email_address",
  title: "Email address in agent output",
  severity: "medium",
  find: (text) => EMAIL.test(text),
});
