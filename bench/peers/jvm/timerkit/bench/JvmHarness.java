// SPDX-License-Identifier: MIT
// tkbench's JVM harness: the JDK's ScheduledThreadPoolExecutor and Netty's
// HashedWheelTimer run through tkbench's executor-level workloads, in a JVM of
// their own (bench/peers/child.c starts one per peer and workload through the
// launcher tkbench-jvm; docs/child-protocol.md is the protocol).
//
//   java ... timerkit.bench.JvmHarness PEER MEASUREMENT REPS WARMUPS COUNT SECONDS N[,N...]
//   java ... timerkit.bench.JvmHarness --describe
//
// PEER names a row of PEERS below; MEASUREMENT is one of the measurements
// below (ops, burst, latency, memory): a workload's descriptor
// (bench/workloads/*.c, its `child` field) names the one that runs it, so the
// workloads are named only there. For each N in turn the harness runs WARMUPS unreported
// iterations, then REPS measured ones, and prints one line per value of a
// measured iteration:
//
//   N REP KEY VALUE
//
// KEY is a metric of that workload's descriptor (bench/workloads/*.c), or
// `iteration_s` (the time the iteration measured, for Google Benchmark's
// manual time), or `late_ns` (one lateness sample; latency). The last line
// is `done`. Anything wrong: a message on stderr and exit status 1.
//
// The inputs are those of the C workloads: the same generator (splitmix64),
// seeds, delay ranges, counts and pauses (bench/harness/harness.h, harness/drive-core.c),
// so that the rows compare with the C peers'. docs/workloads.md says what
// each workload measures here, and how that differs from the C side.
package timerkit.bench;

import io.netty.util.HashedWheelTimer;
import io.netty.util.Timeout;
import io.netty.util.TimerTask;
import java.io.IOException;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

public final class JvmHarness {
    static final long NS_PER_MS = 1_000_000L;
    static final long NS_PER_S = 1_000_000_000L;
    // bench/harness/harness.h: TKB_SEED, TKB_W1_LO, TKB_W1_HI
    static final long SEED = 0x74696d65726b6974L;
    static final long W1_LO = 10 * NS_PER_S;
    static final long W1_HI = 20 * NS_PER_S;

    // ---- the timer services -------------------------------------------------

    /** A task both APIs accept: the JDK's Runnable, Netty's TimerTask. */
    abstract static class Task implements Runnable, TimerTask {
        @Override
        public final void run(Timeout t) {
            run();
        }
    }

    static final Task NOOP = new Task() {
        @Override
        public void run() {}
    };

    /** A running timer service: a peer, as tkbench's tkb_svc_ops sees one. */
    interface Service {
        /** Runs task after delayNs; returns the handle cancel() takes. */
        Object schedule(Task task, long delayNs);

        void cancel(Object handle);

        /** Stops the service; pending timers are dropped. */
        void close() throws InterruptedException;

        /** How long the service may take to take in `n` timers handed to it. */
        long intakeNs(long n);

        /** How long it may take to let go of cancelled timers. */
        long releaseNs();
    }

    static final ThreadFactory DAEMON = r -> {
        Thread t = new Thread(r, "tkbench-jvm-timer");
        t.setDaemon(true);
        return t;
    };

    static final class Stpe implements Service {
        final ScheduledThreadPoolExecutor ex;

        Stpe(boolean removeOnCancel) {
            ex = new ScheduledThreadPoolExecutor(1, DAEMON);
            ex.setRemoveOnCancelPolicy(removeOnCancel);
        }

        @Override
        public Object schedule(Task task, long delayNs) {
            return ex.schedule((Runnable) task, delayNs, TimeUnit.NANOSECONDS);
        }

        @Override
        public void cancel(Object handle) {
            ((ScheduledFuture<?>) handle).cancel(false);
        }

        @Override
        public void close() throws InterruptedException {
            ex.shutdownNow();
            ex.awaitTermination(60, TimeUnit.SECONDS);
        }

        @Override
        public long intakeNs(long n) {
            return 0; // schedule() queues the task itself
        }

        @Override
        public long releaseNs() {
            return 0; // cancel() removes the task, or leaves it queued for good
        }
    }

    static final class Netty implements Service {
        final HashedWheelTimer timer;
        final long tickNs;

        Netty(long tickMs, int slots) {
            timer = new HashedWheelTimer(DAEMON, tickMs, TimeUnit.MILLISECONDS, slots);
            tickNs = tickMs * NS_PER_MS;
        }

        @Override
        public Object schedule(Task task, long delayNs) {
            return timer.newTimeout(task, delayNs, TimeUnit.NANOSECONDS);
        }

        @Override
        public void cancel(Object handle) {
            ((Timeout) handle).cancel();
        }

        @Override
        public void close() {
            timer.stop();
        }

        @Override
        public long intakeNs(long n) {
            // its worker moves at most 100000 new timeouts into the wheel per tick
            return (n / 100_000 + 2) * tickNs;
        }

        @Override
        public long releaseNs() {
            return 2 * tickNs; // its worker unlinks every cancelled timeout at each tick
        }
    }

    interface Maker {
        Service make();
    }

    /** The peers, by the name tkbench's peer table (bench/peers/peers.c) passes. */
    static Maker peer(String name) {
        switch (name) {
            case "jdk-stpe":
                return () -> new Stpe(false);
            case "jdk-stpe-roc":
                return () -> new Stpe(true);
            case "netty-1ms":
                return () -> new Netty(1, 1024);
            case "netty-100ms":
                return () -> new Netty(100, 512);
            default:
                return null;
        }
    }

    // ---- inputs: bench/tkbench.h's tkb_rng and bench/harness/drive-core.c ---------

    static final class Rng {
        long s;

        Rng(long seed) {
            s = seed;
        }

        long next() {
            long z = (s += 0x9e3779b97f4a7c15L);
            z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
            z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
            return z ^ (z >>> 31);
        }
    }

    static long[] uniform(int n, long lo, long hi, long seed) {
        Rng r = new Rng(seed);
        long[] d = new long[n];
        for (int i = 0; i < n; i++)
            d[i] = lo + Long.remainderUnsigned(r.next(), hi - lo + 1);
        return d;
    }

    static int[] permutation(int n, long seed) {
        int[] p = new int[n];
        for (int i = 0; i < n; i++)
            p[i] = i;
        Rng r = new Rng(seed);
        for (int i = n; i > 1; i--) {
            int j = (int) Long.remainderUnsigned(r.next(), i);
            int t = p[i - 1];
            p[i - 1] = p[j];
            p[j] = t;
        }
        return p;
    }

    static int[] randomIndices(int count, int n, long seed) {
        Rng r = new Rng(seed);
        int[] p = new int[count];
        for (int i = 0; i < count; i++)
            p[i] = (int) Long.remainderUnsigned(r.next(), n);
        return p;
    }

    // ---- pauses: bench/harness/drive-service.c -----------------------------------------

    static void sleepNs(long ns) throws InterruptedException {
        if (ns > 0)
            Thread.sleep(ns / NS_PER_MS, (int) (ns % NS_PER_MS));
    }

    /** tkb_settle(): 20 ms + 200 ns per timer. */
    static void settle(long n) throws InterruptedException {
        sleepNs(20 * NS_PER_MS + 200 * n);
    }

    /** The service's thread started: one no-op timer due now, and 20 ms. */
    static void warmUp(Service s) throws InterruptedException {
        s.schedule(NOOP, 0);
        sleepNs(20 * NS_PER_MS);
    }

    /** tkb_w2_offset_ns(): max(200 ms, 2 us x n). */
    static long w2Offset(long n) {
        return Math.max(200 * NS_PER_MS, 2000 * n);
    }

    // ---- output ---------------------------------------------------------------

    final PrintStream out;
    final Maker maker;
    final int count;
    final double seconds;

    JvmHarness(PrintStream out, Maker maker, int count, double seconds) {
        this.out = out;
        this.maker = maker;
        this.count = count;
        this.seconds = seconds;
    }

    /** The values of one iteration; printed only for a measured one. */
    static final class Sink {
        final StringBuilder sb = new StringBuilder();
        final String prefix;

        Sink(int n, int rep) {
            prefix = n + " " + rep + " ";
        }

        void put(String key, double v) {
            sb.append(prefix).append(key).append(' ').append(v).append('\n');
        }

        void put(String key, long v) {
            sb.append(prefix).append(key).append(' ').append(v).append('\n');
        }
    }

    // ---- ops: schedule, cancel, churn (bench/workloads/w1_exec.c) ----------------

    /** Cancel N (random order), schedule N without keeping a handle, churn
     *  `count` pairs at population N; nanoseconds per operation. */
    void ops(int n, Sink sink) throws InterruptedException {
        int pairs = count;
        long[] delays = uniform(n, W1_LO, W1_HI, SEED + n);
        long[] next = uniform(pairs, W1_LO, W1_HI, SEED * 5 + n);
        int[] perm = permutation(n, SEED * 3 + n);
        int[] victims = randomIndices(pairs, n, SEED * 7 + n);
        Object[] h = new Object[n];

        Service s = maker.make();
        warmUp(s);
        for (int i = 0; i < n; i++)
            h[i] = s.schedule(NOOP, delays[i]);
        settle(n);
        long t2 = System.nanoTime();
        for (int i = 0; i < n; i++)
            s.cancel(h[perm[i]]);
        long t3 = System.nanoTime();
        settle(n);
        long t0 = System.nanoTime();
        for (int i = 0; i < n; i++)
            s.schedule(NOOP, delays[i]);
        long t1 = System.nanoTime();
        s.close();

        s = maker.make();
        warmUp(s);
        for (int i = 0; i < n; i++)
            h[i] = s.schedule(NOOP, delays[i]);
        settle(n);
        long t4 = System.nanoTime();
        for (int k = 0; k < pairs; k++) {
            int v = victims[k];
            s.cancel(h[v]);
            h[v] = s.schedule(NOOP, next[k]);
        }
        long t5 = System.nanoTime();
        s.close();

        sink.put("schedule_ns", (double) (t1 - t0) / n);
        sink.put("cancel_ns", (double) (t3 - t2) / n);
        sink.put("churn_ns", (double) (t5 - t4) / pairs);
        sink.put("iteration_s", (double) ((t1 - t0) + (t3 - t2) + (t5 - t4)) / 1e9);
    }

    // ---- burst: firing throughput (bench/workloads/w2_burst.c) ------------------

    static final class Burst extends Task {
        final long n;
        final AtomicLong fired = new AtomicLong();
        volatile long firstNs, lastNs;

        Burst(long n) {
            this.n = n;
        }

        @Override
        public void run() {
            long k = fired.incrementAndGet();
            if (k == 1)
                firstNs = System.nanoTime();
            if (k == n)
                lastNs = System.nanoTime();
        }
    }

    /** N timers due at one instant; callbacks per second from it to the last. */
    void burst(int n, Sink sink) throws InterruptedException, HarnessFailure {
        Service s = maker.make();
        Burst b = new Burst(n);
        warmUp(s);
        long due = System.nanoTime() + w2Offset(n);
        for (int i = 0; i < n; i++)
            s.schedule(b, due - System.nanoTime()); // the APIs take delays only
        long schedEnd = System.nanoTime();
        boolean all = waitFired(b.fired, n, due + 60 * NS_PER_S);
        long last = b.lastNs;
        s.close();
        if (!all)
            throw new HarnessFailure("burst: not every timer fired within 60 s");
        if (schedEnd > due)
            System.err.printf("tkbench-jvm: burst: scheduling overran the offset by %.1f ms%n",
                              (schedEnd - due) / 1e6);
        long span = Math.max(last - due, 1);
        long drain = Math.max(last - b.firstNs, 1);
        sink.put("burst_fire_rate_per_s", n / (span / 1e9));
        sink.put("burst_drain_rate_per_s", n / (drain / 1e9));
        sink.put("iteration_s", span / 1e9);
    }

    static boolean waitFired(AtomicLong fired, long n, long giveUpNs) throws InterruptedException {
        while (fired.get() < n) {
            if (System.nanoTime() > giveUpNs)
                return false;
            sleepNs(2 * NS_PER_MS);
        }
        return true;
    }

    // ---- latency: lateness under a steady load (bench/workloads/w3_latency.c) ----

    static final class Late extends Task {
        final long[] late;
        final AtomicLong fired;
        final int index;
        long deadlineNs;

        Late(long[] late, AtomicLong fired, int index) {
            this.late = late;
            this.fired = fired;
            this.index = index;
        }

        @Override
        public void run() {
            late[index] = System.nanoTime() - deadlineNs;
            fired.incrementAndGet(); // publishes late[index] to the waiting thread
        }
    }

    /** N timers, delays uniform in [1 ms, 100 ms], at a steady rate over
     *  `window` seconds; prints every lateness, the process's CPU share. */
    void latency(int n, double window, Sink sink) throws InterruptedException, HarnessFailure {
        long[] delay = uniform(n, NS_PER_MS, 100 * NS_PER_MS, SEED + 29);
        long[] late = new long[n];
        AtomicLong fired = new AtomicLong();
        Late[] recs = new Late[n];
        for (int i = 0; i < n; i++)
            recs[i] = new Late(late, fired, i);
        long interval = (long) (window * 1e9 / n);
        Service s = maker.make();
        warmUp(s);
        long start = System.nanoTime();
        long cpu0 = processCpuNs();
        for (int i = 0; i < n; i++) {
            sleepUntil(start + (long) i * interval);
            recs[i].deadlineNs = System.nanoTime() + delay[i];
            s.schedule(recs[i], delay[i]);
        }
        boolean all = waitFired(fired, n, System.nanoTime() + 30 * NS_PER_S);
        long end = System.nanoTime();
        long cpu1 = processCpuNs();
        s.close();
        if (!all)
            throw new HarnessFailure("latency: not every timer fired within 30 s");
        for (int i = 0; i < n; i++)
            sink.put("late_ns", late[i]);
        sink.put("process_cpu_pct", 100.0 * (cpu1 - cpu0) / (end - start));
        sink.put("iteration_s", (end - start) / 1e9);
    }

    static void sleepUntil(long deadline) throws InterruptedException {
        long d = deadline - System.nanoTime();
        if (d > 0)
            sleepNs(d);
    }

    static long processCpuNs() {
        java.lang.management.OperatingSystemMXBean os =
            ManagementFactory.getOperatingSystemMXBean();
        if (os instanceof com.sun.management.OperatingSystemMXBean)
            return ((com.sun.management.OperatingSystemMXBean) os).getProcessCpuTime();
        return 0;
    }

    // ---- memory: live heap per timer (bench/workloads/w5_memory.c) ---------------

    /** Live heap: two full collections (-XX:+UseParallelGC: System.gc() is a
     *  full, compacting collection) with the finalizers run between them (a
     *  stopped HashedWheelTimer has one: what it holds is freed only by the
     *  collection after it ran), then the sum over the heap's pools of what
     *  the last collection left (not the current use: eden fills again at once). */
    static long heapUsed() {
        System.gc();
        System.runFinalization();
        System.gc();
        long used = 0;
        for (MemoryPoolMXBean p : ManagementFactory.getMemoryPoolMXBeans())
            if (p.getType() == MemoryType.HEAP && p.getCollectionUsage() != null)
                used += p.getCollectionUsage().getUsed();
        return used;
    }

    /** Live-heap growth per outstanding timer with the handles kept (the
     *  user's array of them included, as the C side counts its timer
     *  storage), the live heap left after cancelling them all, and the growth
     *  per timer when the handles are dropped. Not the RSS: the fixed heap's
     *  pages, once touched by earlier allocation, stay resident whatever
     *  lives in them (docs/workloads.md). */
    void memory(int n, Sink sink) throws InterruptedException {
        long t0 = System.nanoTime();
        long[] delays = uniform(n, W1_LO, W1_HI, SEED + n);
        Service s = maker.make();
        s.cancel(s.schedule(NOOP, 3600 * NS_PER_S)); // the whole path once
        sleepNs(50 * NS_PER_MS);
        long heap0 = heapUsed();
        Object[] h = new Object[n];
        for (int i = 0; i < n; i++)
            h[i] = s.schedule(NOOP, delays[i]);
        sleepNs(50 * NS_PER_MS + s.intakeNs(n));
        long heap1 = heapUsed();
        for (int i = 0; i < n; i++)
            s.cancel(h[i]);
        h = null;
        sleepNs(50 * NS_PER_MS + s.releaseNs());
        long heap2 = heapUsed();
        s.close();

        s = maker.make();
        s.cancel(s.schedule(NOOP, 3600 * NS_PER_S));
        sleepNs(50 * NS_PER_MS);
        long heap3 = heapUsed();
        for (int i = 0; i < n; i++)
            s.schedule(NOOP, delays[i]);
        sleepNs(50 * NS_PER_MS + s.intakeNs(n));
        long heap4 = heapUsed();
        s.close();

        sink.put("bytes_per_timer", (double) (heap1 - heap0) / n);
        sink.put("rss_after_cancel_bytes", heap2 - heap0);
        sink.put("bytes_per_timer_no_handle", (double) (heap4 - heap3) / n);
        sink.put("iteration_s", (System.nanoTime() - t0) / 1e9);
    }

    // ---- idle: a started service left alone (bench/workloads/w4_idle.c) --------------

    /** One thread's context switches (voluntary + nonvoluntary) and CPU time in ns. */
    record ThreadUse(long ctxt, long cpuNs) {}

    /** Every thread of this JVM but the calling one, by thread id, as
     *  tkb_threads_read() reads tkbench's own (bench/harness/sysprobe.c): the
     *  counts from /proc/self/task/TID/status, the CPU time from its schedstat. */
    static Map<String, ThreadUse> readThreads() throws IOException {
        String self = Files.readSymbolicLink(Paths.get("/proc/thread-self")).getFileName().toString();
        Map<String, ThreadUse> use = new HashMap<>();
        try (DirectoryStream<Path> tasks = Files.newDirectoryStream(Paths.get("/proc/self/task"))) {
            for (Path task : tasks) {
                String tid = task.getFileName().toString();
                if (tid.equals(self))
                    continue;
                try {
                    long ctxt = 0;
                    for (String line : Files.readAllLines(task.resolve("status")))
                        if (line.startsWith("voluntary_ctxt_switches:")
                            || line.startsWith("nonvoluntary_ctxt_switches:"))
                            ctxt += Long.parseLong(line.substring(line.indexOf(':') + 1).trim());
                    String sched = Files.readString(task.resolve("schedstat")).trim();
                    use.put(tid, new ThreadUse(ctxt, Long.parseLong(sched.split(" ")[0])));
                } catch (NoSuchFileException e) {
                    // the thread ended meanwhile
                }
            }
        }
        return use;
    }

    /** idle (bench/workloads/w4_idle.c): the service's thread started (one task run and waited for),
     *  its queue empty or, with `hour`, one timer an hour ahead, 200 ms to
     *  settle, then a window of `seconds` in which this thread only sleeps:
     *  the wake-ups and CPU of every other thread of the JVM over it (the
     *  collector's, the compiler's and the VM's own threads count too: they
     *  are what an idle Java service costs). */
    void idle(boolean hour, Sink sink) throws InterruptedException, HarnessFailure, IOException {
        Service s = maker.make();
        AtomicLong ran = new AtomicLong();
        s.schedule(new Task() {
            @Override
            public void run() {
                ran.incrementAndGet();
            }
        }, 0);
        long giveUp = System.nanoTime() + 10 * NS_PER_S;
        while (ran.get() == 0 && System.nanoTime() < giveUp)
            sleepNs(NS_PER_MS);
        if (ran.get() == 0) {
            s.close();
            throw new HarnessFailure("idle: the warm-up task did not run within 10 s");
        }
        Object later = hour ? s.schedule(NOOP, 3600 * NS_PER_S) : null;
        sleepNs(200 * NS_PER_MS);
        long window = (long) (seconds * 1e9);
        Map<String, ThreadUse> before = readThreads();
        long cpu0 = processCpuNs();
        sleepNs(window);
        long cpu1 = processCpuNs();
        Map<String, ThreadUse> after = readThreads();
        if (later != null)
            s.cancel(later);
        s.close();
        long ctxt = 0, cpu = 0;
        for (Map.Entry<String, ThreadUse> e : after.entrySet()) {
            ThreadUse was = before.getOrDefault(e.getKey(), new ThreadUse(0, 0));
            ctxt += e.getValue().ctxt() - was.ctxt();
            cpu += e.getValue().cpuNs() - was.cpuNs();
        }
        sink.put("idle_wakeups", ctxt);
        sink.put("idle_cpu_ms", cpu / 1e6);
        sink.put("idle_cpu_process_ms", (cpu1 - cpu0) / 1e6);
        sink.put("idle_threads", after.size());
        sink.put("iteration_s", window / 1e9);
    }

    // ---- the run ----------------------------------------------------------------------

    static final class HarnessFailure extends Exception {
        private static final long serialVersionUID = 1L;

        HarnessFailure(String msg) {
            super(msg);
        }
    }

    /** One iteration. A warm-up gives the compiler the code paths: ops's
     *  at the full n (its timed phases also want the heap's pages touched at
     *  that size), burst's and memory's at a tenth of n (what they measure
     *  does not depend on it; it keeps the suite short), latency's over a
     *  tenth of the window. */
    void iteration(String measurement, int n, boolean warm, Sink sink)
        throws InterruptedException, HarnessFailure, IOException {
        int tenth = warm ? Math.max(1000, n / 10) : n;
        switch (measurement) {
            case "ops":
                ops(n, sink);
                break;
            case "burst":
                burst(tenth, sink);
                break;
            case "latency":
                latency(n, warm ? seconds / 10 : seconds, sink);
                break;
            case "memory":
                memory(tenth, sink);
                break;
            case "idle-empty":
            case "idle-hour":
                idle(measurement.equals("idle-hour"), sink);
                break;
            default:
                throw new HarnessFailure("unknown measurement " + measurement);
        }
    }

    /** `--describe` (docs/child-protocol.md): the JVM, its flags, Netty's version,
     *  and the measurements this harness implements. */
    static void describe() {
        String netty = HashedWheelTimer.class.getPackage().getImplementationVersion();
        System.out.printf("runtime %s %s (%s), flags %s, Netty %s%n",
            System.getProperty("java.vm.name"), System.getProperty("java.runtime.version"),
            System.getProperty("java.vm.vendor"),
            String.join(" ", ManagementFactory.getRuntimeMXBean().getInputArguments()),
            netty != null ? netty : "(version not in its jar)");
        System.out.println("measurements ops burst latency memory idle-empty idle-hour");
        System.out.flush();
        System.exit(System.out.checkError() ? 1 : 0);
    }

    public static void main(String[] args) {
        if (args.length == 1 && args[0].equals("--describe"))
            describe();
        if (args.length != 7) {
            System.err.println("usage: JvmHarness PEER MEASUREMENT REPS WARMUPS COUNT SECONDS N[,N...]");
            System.exit(2);
        }
        Maker maker = peer(args[0]);
        if (maker == null) {
            System.err.println("tkbench-jvm: unknown peer " + args[0]);
            System.exit(2);
        }
        try {
            int reps = Integer.parseInt(args[2]);
            int warmups = Integer.parseInt(args[3]);
            int count = Integer.parseInt(args[4]);
            double seconds = Double.parseDouble(args[5]);
            PrintStream out = System.out;
            JvmHarness hx = new JvmHarness(out, maker, count, seconds);
            for (String size : args[6].split(",")) {
                int n = Integer.parseInt(size);
                boolean idle = args[1].startsWith("idle-");
                if ((n <= 0 && !(idle && n == 0)) || reps <= 0 || warmups < 0 || count <= 0)
                    throw new HarnessFailure("bad arguments");
                for (int it = 0; it < warmups + reps; it++) {
                    boolean warm = it < warmups;
                    Sink sink = new Sink(n, it - warmups);
                    hx.iteration(args[1], n, warm, sink);
                    if (!warm) {
                        out.print(sink.sb);
                        out.flush();
                    }
                }
            }
            out.println("done");
            out.flush();
            System.exit(out.checkError() ? 1 : 0);
        } catch (HarnessFailure | NumberFormatException | InterruptedException | IOException e) {
            System.err.println("tkbench-jvm: " + args[0] + " " + args[1] + ": " + e.getMessage());
            System.exit(1);
        } catch (OutOfMemoryError e) {
            System.err.println("tkbench-jvm: " + args[0] + " " + args[1] + ": out of heap");
            System.exit(1);
        }
    }
}
