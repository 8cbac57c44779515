package io.attn.parity;

import io.attn.AttnException;
import io.attn.backend.Backend;
import io.attn.exec.Executor;
import io.attn.graph.Node;
import io.attn.io.Json;
import io.attn.io.Npy;
import io.attn.io.SafeTensors;
import io.attn.nn.StateDict;
import io.attn.tensor.Tensor;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * PyTorch golden cases (written by {@code tools/golden_torch.py}, see its docstring for the layout) run through the
 * engine: each case folder's {@code model.safetensors} (state_dict + config metadata) and {@code in.<name>.npy} inputs
 * become an engine graph built directly from the nn layers ({@link GoldenMapping}), run on a {@link Backend}, and every
 * output listed in the config is compared with {@code out.<name>.npy}, PyTorch's float64 run.
 *
 * <p>Bound: relative Frobenius error {@code ||engine - torch64|| / ||torch64|| <= 1e-5}, the same bound and reasoning
 * as {@link LayerCases#BOUND} (the float64 oracle is exact to ~1e-12; reading it as float32 adds ~6e-8). For context
 * the result also carries PyTorch's own float32 error against its float64 run ({@code out32.<name>.npy}), which
 * should be of the same order as the engine's.
 *
 * <p>A case that cannot be read or mapped is a FAIL with the reason, never skipped.
 */
public final class GoldenCases {
    private GoldenCases() {}

    /** The pass bound on the relative error: see the class comment. */
    public static final double BOUND = LayerCases.BOUND;

    private static final Pattern SAFE_NAME = Pattern.compile("[A-Za-z0-9_.+-]+");

    /** One case: its name (= folder name), folder, and the config from index.json (may be null). */
    public record Case(String name, Path dir, Map<String, Object> indexConfig) {}

    /**
     * The outcome of one case on one backend: the worst relative error over the compared outputs ({@code where}
     * names it), PyTorch's float32 relative error for comparison (NaN when out32 files are absent), pass, and "ok" or
     * why it failed.
     */
    public record Result(
            String name,
            String module,
            String backend,
            double relErr,
            String where,
            double torch32RelErr,
            boolean pass,
            String message) {}

    /**
     * Reads {@code dir/index.json}.
     *
     * @throws AttnException BAD_INPUT when the folder or index is missing or malformed, or lists no case
     */
    public static List<Case> load(Path dir) {
        if (!Files.isDirectory(dir)) throw AttnException.badInput(dir + ": no such directory");
        Path index = dir.resolve("index.json");
        if (!Files.isRegularFile(index))
            throw AttnException.badInput(dir + ": no index.json (make a golden folder with tools/golden_torch.py)");
        Object root = Json.read(index);
        if (!(root instanceof Map<?, ?> m) || !(m.get("cases") instanceof List<?> list))
            throw AttnException.badInput(index + ": expected an object with a \"cases\" array");
        List<Case> cases = new ArrayList<>();
        Set<String> seen = new HashSet<>();
        for (Object o : list) {
            if (!(o instanceof Map<?, ?> e) || !(e.get("name") instanceof String name))
                throw AttnException.badInput(index + ": every case needs a string \"name\", got " + o);
            if (!seen.add(name)) throw AttnException.badInput(index + ": duplicate case \"" + name + "\"");
            Map<String, Object> cfg = e.get("config") == null ? null : GoldenMapping.map(e.get("config"), name);
            cases.add(new Case(name, dir.resolve(SAFE_NAME.matcher(name).matches() ? name : "_"), cfg));
        }
        if (cases.isEmpty()) throw AttnException.badInput(index + ": no cases");
        return cases;
    }

    /** Runs one case on {@code backend}; never throws for a bad case or an engine failure (they are FAILs). */
    public static Result run(Case c, Backend backend) {
        String module =
                c.indexConfig() == null ? "?" : String.valueOf(c.indexConfig().get("module"));
        try {
            if (!SAFE_NAME.matcher(c.name()).matches()
                    || c.name().equals("..")
                    || c.name().equals(".")) return fail(c, module, backend, "case name is not a plain folder name");
            if (!Files.isDirectory(c.dir())) return fail(c, module, backend, "no folder " + c.dir());
            Path model = c.dir().resolve("model.safetensors");
            if (!Files.isRegularFile(model)) return fail(c, module, backend, "no model.safetensors");
            SafeTensors.File st = SafeTensors.read(model);
            String text = st.metadata().get("config");
            Map<String, Object> cfg =
                    text != null ? GoldenMapping.map(Json.parse(text, model + " config"), "config") : c.indexConfig();
            if (cfg == null) return fail(c, module, backend, "no config (neither model metadata nor index.json)");
            module = String.valueOf(cfg.get("module"));
            if (!(cfg.get("outputs") instanceof List<?> outs) || outs.isEmpty())
                return fail(c, module, backend, "config lists no \"outputs\"");
            GoldenMapping.Built built = GoldenMapping.build(
                    cfg, new StateDict(st.tensors(), model.toString()), n -> read(c.dir(), "in", n));
            List<String> names = new ArrayList<>();
            List<Node> nodes = new ArrayList<>();
            for (Object o : outs) {
                Node n = built.outputs.get(String.valueOf(o));
                if (n == null)
                    return fail(c, module, backend, "output '" + o + "' is not produced by the engine mapping");
                names.add(String.valueOf(o));
                nodes.add(n);
            }
            List<Tensor> got = new ArrayList<>();
            try (Executor ex = new Executor(backend, built.g.build(nodes.toArray(Node[]::new)))) {
                List<Tensor> results = ex.run(built.feeds);
                for (int i = 0; i < results.size(); i++) { // a batch_first=False module's output is (L, B, E)
                    Tensor t = results.get(i);
                    got.add(built.seqFirst && names.get(i).equals("output") ? LayerCases.transpose01(t) : t);
                }
            }
            double worst = 0, torch32 = Double.NaN;
            String where = names.get(0);
            for (int i = 0; i < names.size(); i++) {
                Tensor want = read(c.dir(), "out", names.get(i));
                if (!want.allFinite())
                    return fail(c, module, backend, "out." + names.get(i) + ".npy holds NaN/Inf (PyTorch NaN row?)");
                if (!got.get(i).shape().equals(want.shape()))
                    return fail(
                            c,
                            module,
                            backend,
                            names.get(i) + ": engine shape " + got.get(i).shape() + ", PyTorch " + want.shape());
                double e = relErr(got.get(i), want);
                if (!(e <= worst)) {
                    worst = e;
                    where = names.get(i);
                }
                Path p32 = c.dir().resolve("out32." + names.get(i) + ".npy");
                if (Files.isRegularFile(p32)) {
                    double t = relErr(Npy.read(p32), want);
                    torch32 = Double.isNaN(torch32) ? t : Math.max(torch32, t);
                }
            }
            boolean pass = worst <= BOUND;
            String msg = pass ? "ok" : where + ": relative error " + fmt(worst) + " > " + BOUND;
            return new Result(c.name(), module, backend.name(), worst, where, torch32, pass, msg);
        } catch (AttnException e) {
            return fail(c, module, backend, e.getMessage());
        } catch (RuntimeException e) {
            return fail(c, module, backend, "threw " + e);
        }
    }

    /** Relative Frobenius error {@code ||got - want|| / ||want||}; infinite for a shape mismatch or a NaN. */
    public static double relErr(Tensor got, Tensor want) {
        if (!Arrays.equals(got.shape().dims(), want.shape().dims())) return Double.POSITIVE_INFINITY;
        double num = 0, den = 0;
        float[] g = got.data(), w = want.data();
        for (int i = 0; i < w.length; i++) {
            if (Float.isNaN(g[i])) return Double.POSITIVE_INFINITY;
            double d = (double) g[i] - w[i];
            num += d * d;
            den += (double) w[i] * w[i];
        }
        return Math.sqrt(num) / Math.max(Math.sqrt(den), 1e-30);
    }

    private static Tensor read(Path dir, String prefix, String name) {
        Path p = dir.resolve(prefix + "." + name + ".npy");
        if (!SAFE_NAME.matcher(name).matches() || !Files.isRegularFile(p))
            throw AttnException.badInput("missing " + prefix + "." + name + ".npy");
        return Npy.read(p);
    }

    private static Result fail(Case c, String module, Backend b, String why) {
        return new Result(c.name(), module, b.name(), Double.NaN, "", Double.NaN, false, why);
    }

    private static String fmt(double v) {
        return String.format(java.util.Locale.ROOT, "%.3e", v);
    }
}
