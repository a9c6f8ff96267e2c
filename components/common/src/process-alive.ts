/**
 * Whether a process `pid` exists (signal 0: no signal is sent). EPERM means it exists and belongs to someone else;
 * only ESRCH (or a pid that cannot be one) means it is gone.
 */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
