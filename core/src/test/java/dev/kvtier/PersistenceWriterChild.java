package dev.kvtier;

import dev.kvtier.store.Tier;

import java.io.BufferedReader;
import java.io.FileOutputStream;
import java.io.InputStreamReader;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * The child JVM of {@link PersistenceCrashTest}: opens the persistent directory, checks every byte of
 * every segment it recovered against {@link PersistedSegments#content} (prints {@code BAD <key> <why>}
 * and exits 3 on the first that differs), prints {@code READY <recovered>}, then writes until it is
 * killed: DISK puts (acknowledged {@code DISK <key>} once they returned), CPU puts that demote others
 * to DISK, removals and promotions off DISK (announced {@code BEGIN <key>} before they start), reads,
 * and a close and reopen every 100 operations. Run with a low {@code kvtier.journal.compactSlack}, its
 * journal is compacted every few dozen records.
 * Every line also goes, unbuffered, to the log file given (the parent's record of what happened
 * before the kill: a killed process's pipe is gone, its file writes are not). Not a test itself (no
 * {@code Test} in the name).
 */
public final class PersistenceWriterChild {
    private PersistenceWriterChild() {
    }

    private static PrintStream log;

    private static void say(String line) {
        log.println(line); // first: what the parent counts on is what reached the file
        System.out.println(line);
    }

    /** @param args directory, fsync policy, key prefix (unique per child), random seed, log file */
    public static void main(String[] args) throws IOException {
        log = new PrintStream(new FileOutputStream(args[4], true), true, StandardCharsets.UTF_8);
        Path directory = Path.of(args[0]);
        DiskPersistence persistence = DiskPersistence.of("crash-test")
                .fsync(DiskPersistence.FsyncPolicy.valueOf(args[1])).batch(16, java.time.Duration.ofMillis(5));
        String prefix = args[2];
        SplittableRandom random = new SplittableRandom(Long.parseLong(args[3]));
        KvTierConfig config = PersistedSegments.config(directory, persistence).build();
        KvTierCache cache = KvTierCache.open(config);
        try {
            List<String> known = new ArrayList<>(cache.recovery().orElseThrow().recoveredKeys());
            for (String key : known) {
                try {
                    PersistedSegments.verify(cache, key);
                } catch (AssertionError | KvTierException e) {
                    say("BAD " + key + " " + e);
                    System.exit(3);
                }
            }
            say("READY " + known.size() + " " + cache.recovery().orElseThrow());
            // The parent tries a second open of the directory now, while this cache holds it; then says GO.
            if (!"GO".equals(new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)).readLine())) {
                System.exit(4);
            }
            for (int i = 0; ; i++) {
                step(cache, known, prefix + "-" + i, random);
                if (i % 100 == 99) { // so that some kills land in a close or an open
                    cache.close();
                    cache = KvTierCache.open(config);
                    say("REOPEN");
                }
            }
        } finally {
            cache.close();
        }
    }

    private static void step(KvTierCache cache, List<String> known, String newKey, SplittableRandom random) {
        int op = random.nextInt(100);
        if (known.size() > 150 && op < 45) {
            String key = known.remove(random.nextInt(known.size()));
            say("BEGIN " + key);
            if (op < 35) {
                cache.remove(key);
            } else if (cache.get(key).isPresent()) {
                cache.ensureResident(key, Tier.CPU); // off DISK: not persisted any more
            }
        } else if (op < 60) {
            PersistedSegments.put(cache, newKey, Tier.DISK);
            known.add(newKey);
            say("DISK " + newKey);
        } else if (op < 90) {
            PersistedSegments.put(cache, newKey, Tier.CPU); // demotes older CPU segments to DISK
            known.add(newKey);
            say("CPU " + newKey);
        } else if (!known.isEmpty()) {
            String key = known.get(random.nextInt(known.size()));
            if (cache.get(key).isPresent()) {
                PersistedSegments.verify(cache, key);
            }
        }
    }
}
