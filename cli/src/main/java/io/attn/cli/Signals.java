package io.attn.cli;

import sun.misc.Signal;

/**
 * SIGTERM and SIGINT as a graceful stop: the action runs (once) instead of the JVM's default, which would exit with 143
 * or 130 before requests in flight are answered. {@code sun.misc.Signal} (module jdk.unsupported) is the JDK's only
 * way to catch a signal.
 */
final class Signals {
    private Signals() {}

    static void onTerminate(Runnable action) {
        Runnable once = new Runnable() {
            private boolean ran;

            @Override
            public synchronized void run() {
                if (ran) return;
                ran = true;
                action.run();
            }
        };
        for (String name : new String[] {"TERM", "INT"})
            Signal.handle(
                    new Signal(name), s -> Thread.ofPlatform().name("attn-stop").start(once));
    }
}
