// What Linux says of a process of the bench (the service, the example agent).
import { readFileSync } from "node:fs";

/** Linux only: resident set high-water mark (MB) and CPU time (ms) of a process; NaN elsewhere. */
export function readProc(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const hwmKb = Number(/^VmHWM:\s+(\d+) kB/m.exec(status)?.[1]);
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const ticks = Number(fields[11]) + Number(fields[12]); // utime + stime (fields 14 and 15)
    return { peakRssMb: hwmKb / 1024, cpuMs: ticks * 10 }; // USER_HZ is 100 on Linux
  } catch {
    return { peakRssMb: Number.NaN, cpuMs: Number.NaN };
  }
}
