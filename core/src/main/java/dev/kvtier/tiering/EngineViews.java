package dev.kvtier.tiering;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiFunction;

/**
 * Internal: how the door builds a view that lives in an API package over its {@link TieringEngine} (today
 * {@code PrefixBlockCache}) without that view offering a public factory that names the engine, an internal type
 * (the exported packages' public signatures use exported types only: {@code ArchitectureTest}). The view's class
 * registers its factory here from its static initializer; the door asks for a view by its class, which initializes
 * it first (the JDK's {@code SharedSecrets} pattern). Thread-safe.
 */
public final class EngineViews {
    private static final Map<Class<?>, BiFunction<TieringEngine, Object, ?>> FACTORIES = new ConcurrentHashMap<>();

    private EngineViews() {
    }

    /** Called once by {@code view}'s static initializer: how to build one over an engine from a {@code parameter}. */
    public static <P, V> void register(Class<V> view, Class<P> parameter, BiFunction<TieringEngine, P, V> factory) {
        FACTORIES.put(view, (engine, argument) -> factory.apply(engine, parameter.cast(argument)));
    }

    /**
     * A new {@code view} over {@code engine}, built by the factory its class registered.
     *
     * @throws IllegalStateException if {@code view} registered no factory (a view class broken by an edit)
     */
    public static <V> V create(Class<V> view, TieringEngine engine, Object parameter) {
        initialize(view);
        BiFunction<TieringEngine, Object, ?> factory = FACTORIES.get(view);
        if (factory == null) {
            throw new IllegalStateException(view.getName() + " registered no factory with EngineViews in its static"
                    + " initializer");
        }
        return view.cast(factory.apply(engine, parameter));
    }

    private static void initialize(Class<?> view) {
        try {
            Class.forName(view.getName(), true, view.getClassLoader());
        } catch (ClassNotFoundException e) {
            throw new IllegalStateException("cannot initialize " + view.getName(), e);
        }
    }
}
