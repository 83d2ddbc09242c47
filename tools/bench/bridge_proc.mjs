// What bridge_bench.mjs reads from /proc: a process's resident memory and
// CPU time, the process tree (to find the server processes behind a
// bridge), and how busy the whole machine was. Plain synchronous reads.
import fs from 'node:fs';

// VmRSS of the process `pid`, in KiB.
export function rssKiB(pid) {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)[1]);
}

// CPU time of every thread of the process `pid` (not its children: a
// bridge's server processes do not count), in ns, from each thread's
// schedstat; NaN when there is no such process.
export function cpuNs(pid) {
  if (!pid) return NaN;
  let total = 0;
  try {
    for (const task of fs.readdirSync(`/proc/${pid}/task`)) {
      try {
        total += Number(fs.readFileSync(`/proc/${pid}/task/${task}/schedstat`, 'utf8').split(' ')[0]);
      } catch {
        // The thread ended meanwhile.
      }
    }
  } catch {
    return NaN;
  }
  return total;
}

// Every process's children, by parent pid, from /proc/<pid>/stat.
export function processTree() {
  const children = new Map();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      // The fields after the command name, which may itself hold spaces.
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (!children.has(parent)) children.set(parent, []);
      children.get(parent).push(Number(entry));
    } catch {
      // The process ended meanwhile.
    }
  }
  return children;
}

// Busy and total CPU time of the whole machine so far, in clock ticks,
// from /proc/stat (idle and iowait count as not busy).
export function machineTicks() {
  const fields = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1, 9).map(Number);
  const total = fields.reduce((a, b) => a + b, 0);
  return { busy: total - fields[3] - fields[4], total };
}
