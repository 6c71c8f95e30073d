/* However often something asks for it, `task` runs at most once per `minInterval` ms and
   never twice at once: the first request runs it at once, the requests within the interval
   after a run become one run when the interval ends, and a request during a run waits for
   it to finish. The flow page refreshes its figures this way when the board changes. */
export function coalesced(task, minInterval) {
  let last = -Infinity;
  let timer = null;
  let running = false;
  let again = false;

  async function run() {
    timer = null;
    running = true;
    again = false;
    last = Date.now();
    try {
      await task();
    } finally {
      running = false;
      if (again) request();
    }
  }

  function request() {
    if (running) { again = true; return; }
    if (timer !== null) return;
    const wait = last + minInterval - Date.now();
    if (wait <= 0) run();
    else timer = setTimeout(run, wait);
  }

  return request;
}
