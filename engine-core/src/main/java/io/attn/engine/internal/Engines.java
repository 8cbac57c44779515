package io.attn.engine.internal;

import io.attn.AttnException;
import io.attn.backend.Backend;
import io.attn.engine.Engine;
import java.util.function.BiFunction;

/**
 * An {@link Engine} over a backend its caller opened, for the engine's own modules (a test's emulated CUDA backend, a
 * benchmark's): not public API, as {@code io.attn.backend} is not (module-info exports this package to the engine's
 * modules only).
 */
public final class Engines {
    private static volatile BiFunction<Backend, String, Engine> factory;

    private Engines() {}

    /** Set once, by {@link Engine}'s class initialization. */
    public static synchronized void factory(BiFunction<Backend, String, Engine> f) {
        if (factory == null) factory = f;
    }

    /** An engine that owns {@code backend} from here and closes it with itself. */
    public static Engine of(Backend backend) {
        if (backend == null) throw AttnException.badInput("backend is null");
        try {
            Class.forName(Engine.class.getName(), true, Engine.class.getClassLoader()); // runs its factory(...)
        } catch (ClassNotFoundException e) {
            throw new IllegalStateException(e);
        }
        return factory.apply(backend, backend.name() + " (given)");
    }
}
