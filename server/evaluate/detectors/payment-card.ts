import { defineDetector } from "./define.js";

/** Luhn checksum, to tell payment card numbers from other long digit runs. */
export function passesLuhn(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let digit = Number(digits[digits.length - 1 - i]);
    if (i % 2 === 1) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
  }
  return digits.length >= 13 && sum % 10 === 0;
}

export const paymentCard = defineDetector({
  name: "payment_card",
  title: "Payment card number in agent output",
  severity: "high",
  find: (text) => [...text.matchAll(/\b\d(?:[ -]?\d){12,18}\b/g)].some((m) => passesLuhn(m[0].replace(/[ -]/g, ""))),
});
