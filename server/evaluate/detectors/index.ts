import { credential } from "./credential.js";
import type { Detector } from "./define.js";
import { emailAddress } from "./email-address.js";
import { paymentCard } from "./payment-card.js";

/** Every built-in detector, run on every run. */
export const DETECTORS: readonly Detector[] = [paymentCard, credential, emailAddress];
