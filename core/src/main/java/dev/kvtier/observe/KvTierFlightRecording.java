package dev.kvtier.observe;

import jdk.jfr.Configuration;
import jdk.jfr.Recording;

import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.Reader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.text.ParseException;

/**
 * The JFR settings shipped in the jar ({@value #SETTINGS}), which enable every kvtier event, and a
 * recording started with them. From the command line, copy the file out of the jar and name it
 * beside the JDK's own settings:
 * <pre>{@code
 * unzip -p kvtier-core.jar dev/kvtier/observe/kvtier.jfc > kvtier.jfc
 * java -XX:StartFlightRecording:settings=default,settings=kvtier.jfc,filename=run.jfr ...
 * jfr print --events dev.kvtier.Transfer run.jfr
 * }</pre>
 * From code: {@code try (Recording r = KvTierFlightRecording.start(path)) { ... }} writes the
 * recording to {@code path} when it is stopped or closed. Stateless and thread-safe.
 */
public final class KvTierFlightRecording {
    /** The resource holding the settings, in the kvtier-core jar. */
    public static final String SETTINGS = "dev/kvtier/observe/kvtier.jfc";

    private KvTierFlightRecording() {
    }

    /**
     * The shipped settings.
     *
     * @return a new configuration read from {@link #SETTINGS}, enabling kvtier's events and nothing else; never null
     * @throws IllegalStateException if the resource is missing or unreadable (a broken jar)
     */
    public static Configuration configuration() {
        // Through the class, not its loader: in the named module dev.kvtier.core a class loader finds no resource of
        // a package that is not open, the module's own classes do.
        try (InputStream in = KvTierFlightRecording.class.getResourceAsStream("/" + SETTINGS)) {
            if (in == null) {
                throw new IllegalStateException("the JFR settings " + SETTINGS + " are missing from the class path"
                        + " (the kvtier-core jar is incomplete)");
            }
            try (Reader reader = new InputStreamReader(in, StandardCharsets.UTF_8)) {
                return Configuration.create(reader);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the JFR settings " + SETTINGS, e);
        } catch (ParseException e) {
            throw new IllegalStateException("the JFR settings " + SETTINGS + " do not parse: " + e.getMessage(), e);
        }
    }

    /**
     * Starts a recording of kvtier's events (only those) that is written to {@code destination}
     * when stopped or closed; the caller owns it.
     *
     * @param destination the file the recording is written to when stopped or closed; replaced if it exists
     * @return the started recording, named "kvtier"; the caller stops or closes it
     * @throws IOException if {@code destination} cannot be written
     * @throws IllegalArgumentException if {@code destination} is null
     */
    public static Recording start(Path destination) throws IOException {
        if (destination == null) {
            throw new IllegalArgumentException("destination must not be null");
        }
        Recording recording = new Recording(configuration());
        try {
            recording.setName("kvtier");
            recording.setDestination(destination);
            recording.start();
            return recording;
        } catch (IOException | RuntimeException e) {
            recording.close();
            throw e;
        }
    }
}
