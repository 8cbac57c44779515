package io.attn.cli;

/**
 * Whether stderr is a terminal, for progress bars. The launchers pipe the JVM's stderr through a filter (it drops the
 * Vector API's start-up warning), so they test their own stderr and pass {@code -Dattn.stderr.tty=true|false}; without
 * that property (the CLI started some other way) the JVM's console decides.
 */
final class Terminal {
    private Terminal() {}

    static boolean stderr() {
        String p = System.getProperty("attn.stderr.tty");
        if (p != null) return Boolean.parseBoolean(p);
        return System.console() != null && System.console().isTerminal();
    }
}
