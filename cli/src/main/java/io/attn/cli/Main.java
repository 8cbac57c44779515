package io.attn.cli;

import io.attn.AttnException;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * The {@code attn} command line. Exit codes ({@link #EXIT_CODES}, shown by every command's {@code --help}; the numbers
 * are {@link AttnException.Code#exitStatus}'s): 0 ok, 1 internal error, 2 usage, 3 bad input, 4 device unavailable, 5
 * device out of memory, 6 non-finite values. Errors
 * print one line, no stack trace ({@code --verbose} shows it); a usage error names the command's {@code --help}.
 */
@Command(
        name = "attn",
        mixinStandardHelpOptions = true,
        versionProvider = Main.Version.class,
        description = "Transformer-attention inference on the JVM (CPU Vector API, CUDA).",
        subcommands = {
            DemoCommand.class,
            RunCommand.class,
            EmbedCommand.class,
            RerankCommand.class,
            ClassifyCommand.class,
            ConvertCommand.class,
            QuantizeCommand.class,
            ServeCommand.class,
            InspectCommand.class,
            ParityCommand.class,
            GoldenCommand.class,
            ProbeCommand.class,
            BenchCommand.class,
            TuneCommand.class,
            GenerateCommand.class,
            CommandLine.HelpCommand.class
        },
        exitCodeListHeading = "%nExit codes:%n")
public final class Main {
    /** The exit codes ({@link AttnException.Code#exitStatus}), one per code kind. */
    public static final int EXIT_INTERNAL = AttnException.Code.INTERNAL.exitStatus(),
            EXIT_USAGE = AttnException.EXIT_USAGE,
            EXIT_BAD_INPUT = AttnException.Code.BAD_INPUT.exitStatus(),
            EXIT_DEVICE = AttnException.Code.DEVICE_UNAVAILABLE.exitStatus(),
            EXIT_OOM = AttnException.Code.DEVICE_OUT_OF_MEMORY.exitStatus(),
            EXIT_NON_FINITE = AttnException.Code.NON_FINITE.exitStatus();

    /** The exit codes, as every command's help lists them (README's table says the same). */
    static final String[] EXIT_CODES = {
        "0:ok",
        EXIT_INTERNAL + ":internal error (a bug; --verbose shows the stack trace)",
        EXIT_USAGE + ":usage error: unknown option, missing or bad option value",
        EXIT_BAD_INPUT + ":bad input: a file, shape, config or mask; an empty input",
        EXIT_DEVICE + ":device unavailable: no GPU, driver or backend for --device",
        EXIT_OOM + ":device out of memory (GPU memory or Java heap)",
        EXIT_NON_FINITE + ":non-finite values: NaN or Inf in the inputs or weights"
    };

    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            String v = Main.class.getPackage().getImplementationVersion();
            return new String[] {"attn " + (v == null ? "0.1.0-SNAPSHOT" : v)};
        }
    }

    public static void main(String[] args) {
        System.exit(execute(args));
    }

    /** Runs the CLI and returns its exit code (used by tests). */
    /**
     * The full name of the command a usage error belongs to: the deepest subcommand parsed ({@code attn bench embed}),
     * also when a command threw its error from a {@code CommandLine} of its own (which knows no parent), else the
     * error's own command.
     */
    private static String commandName(CommandLine root, CommandLine cmd) {
        CommandLine.ParseResult pr = root.getParseResult();
        // picocli's own errors come from the command's place in the tree; a command's own, from a detached CommandLine
        if (pr == null || cmd == root || cmd.getParent() != null)
            return cmd.getCommandSpec().qualifiedName();
        while (pr.hasSubcommand()) pr = pr.subcommand();
        return pr.commandSpec().qualifiedName();
    }

    public static int execute(String... args) {
        CommandLine cl = new CommandLine(new Main());
        withHelp(cl);
        boolean verbose = java.util.Arrays.asList(args).contains("--verbose");
        cl.setParameterExceptionHandler((ex, cmdArgs) -> {
            CommandLine cmd = ex.getCommandLine();
            cmd.getErr()
                    .println("attn: " + AttnException.oneLine(ex.getMessage()) + " (" + commandName(cl, cmd)
                            + " --help shows the usage)");
            return EXIT_USAGE;
        });
        cl.setExecutionExceptionHandler((ex, cmd, parsed) -> {
            boolean internal = !(ex instanceof AttnException a) || a.code() == AttnException.Code.INTERNAL;
            // one line, always: the hint for internal errors goes on the same line
            cmd.getErr()
                    .println("attn: " + oneLine(ex)
                            + (internal && !verbose ? " (run with --verbose for the stack trace)" : ""));
            if (verbose) ex.printStackTrace(cmd.getErr());

            return exitCode(ex);
        });
        try {
            return cl.execute(args);
        } catch (
                Throwable
                        t) { // an Error picocli does not handle (OutOfMemoryError, StackOverflowError): still one line
            System.err.println("attn: " + oneLine(t));
            if (verbose) t.printStackTrace();
            return EXIT_INTERNAL;
        }
    }

    /** Every command gets {@code --help} (with the exit codes) and {@code --version}. */
    private static void withHelp(CommandLine cl) {
        if (cl.getCommandSpec().optionsMap().get("--help") == null)
            cl.getCommandSpec().mixinStandardHelpOptions(true);
        var usage = cl.getCommandSpec().usageMessage();
        usage.exitCodeListHeading("%nExit codes:%n");
        java.util.Map<String, String> codes = new java.util.LinkedHashMap<>();
        for (String c : EXIT_CODES) codes.put(c.substring(0, c.indexOf(':')), c.substring(c.indexOf(':') + 1));
        usage.exitCodeList(codes);
        for (CommandLine sub : cl.getSubcommands().values()) withHelp(sub);
    }

    static String oneLine(Throwable ex) {
        return AttnException.oneLine(describe(ex));
    }

    private static String describe(Throwable ex) {
        String m = ex.getMessage();
        if (ex instanceof AttnException) return m;
        if (ex instanceof java.nio.file.NoSuchFileException) return m + ": no such file";
        if (ex instanceof java.nio.file.AccessDeniedException) return m + ": permission denied";
        if (ex instanceof OutOfMemoryError)
            return "out of memory (" + m + "): the input is too large for this JVM's heap (raise -Xmx)";
        if (ex instanceof StackOverflowError) return "internal error: stack overflow";
        return "internal error: " + ex.getClass().getSimpleName() + (m == null ? "" : ": " + m);
    }

    static int exitCode(Throwable ex) {
        if (ex instanceof AttnException a) return a.code().exitStatus();
        if (ex instanceof java.io.IOException) return EXIT_BAD_INPUT;
        return EXIT_INTERNAL;
    }
}
