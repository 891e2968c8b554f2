package dev.kvtier.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two rank JVMs and one router JVM on a nats-server this test owns; the router, a rank and the server are each
 * killed with SIGKILL at a random point and restarted. At the end the router's index must equal what the ranks hold
 * (nothing missing, nothing applied twice, the killed rank's old epoch cleared). Bounded: 120 s for the whole test.
 */
class MultiProcessClusterTest {
    private static final long WAIT_MS = 40_000;

    @TempDir
    Path directory;

    private final List<Process> children = new ArrayList<>();
    private LocalNatsServer server;

    @AfterEach
    void stopEverything() {
        for (Process child : children) {
            child.destroyForcibly();
        }
        if (server != null) {
            server.kill();
        }
    }

    private record Child(Process process, LinkedBlockingQueue<String> lines) {
        void awaitLine(String expected) throws InterruptedException {
            long deadline = System.currentTimeMillis() + WAIT_MS;
            List<String> seen = new ArrayList<>();
            while (true) {
                String line = lines.poll(Math.max(1, deadline - System.currentTimeMillis()), TimeUnit.MILLISECONDS);
                if (line == null) {
                    throw new AssertionError("no '" + expected + "' from pid " + process.pid() + " within " + WAIT_MS
                            + " ms (alive: " + process.isAlive() + "); its output: "
                            + String.join("\n", seen.subList(Math.max(0, seen.size() - 30), seen.size())));
                }
                if (line.equals(expected)) {
                    return;
                }
                seen.add(line);
            }
        }

        void kill() throws InterruptedException {
            process.destroyForcibly(); // SIGKILL
            process.waitFor(10, TimeUnit.SECONDS);
        }
    }

    private Child launch(Class<?> main, String... args) throws IOException {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> command = new ArrayList<>(List.of(java, "-Xmx128m", "-XX:TieredStopAtLevel=1",
                "-Djava.util.logging.config.file=/dev/null", "-cp", System.getProperty("java.class.path"),
                main.getName()));
        command.addAll(List.of(args));
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        children.add(process);
        LinkedBlockingQueue<String> lines = new LinkedBlockingQueue<>();
        Thread reader = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(process.getInputStream(),
                    StandardCharsets.UTF_8))) {
                for (String line = in.readLine(); line != null; line = in.readLine()) {
                    lines.add(line);
                }
            } catch (IOException ended) {
                // the child is gone
            }
        });
        reader.setDaemon(true);
        reader.start();
        return new Child(process, lines);
    }

    @Test
    @Timeout(120)
    void theRouterEqualsTheRanksAfterKillingTheRouterARankAndTheServer() throws Exception {
        long seed = System.nanoTime();
        Random random = new Random(seed);
        String context = "seed " + seed;
        server = LocalNatsServer.start(directory.resolve("nats"));
        String url = server.url();
        String stream = "MP";
        String snapshot = directory.resolve("router.snapshot").toString();
        String routerOut = directory.resolve("router.out").toString();
        int steps = 150;
        Child router = launch(RouterProcess.class, url, stream, "2", snapshot, routerOut);
        router.awaitLine("STARTED");
        Child rank0 = launch(RankProcess.class, url, stream, "2", "0", "1", "100", Integer.toString(steps),
                directory.toString(), "false");
        Child rank1 = launch(RankProcess.class, url, stream, "2", "1", "1", "200", Integer.toString(steps),
                directory.toString(), "false");

        // Kill the router, a rank and the server, each at a random point of the run, and restart each.
        TimeUnit.MILLISECONDS.sleep(200 + random.nextInt(600)); // choosing a kill point, not synchronizing
        router.kill();
        router = launch(RouterProcess.class, url, stream, "2", snapshot, routerOut);
        router.awaitLine("STARTED");
        TimeUnit.MILLISECONDS.sleep(random.nextInt(500));
        rank0.kill();
        rank0 = launch(RankProcess.class, url, stream, "2", "0", "2", "300", Integer.toString(steps),
                directory.toString(), "true");
        TimeUnit.MILLISECONDS.sleep(random.nextInt(500));
        server.kill();
        server.start();

        rank0.awaitLine("DONE");
        rank1.awaitLine("DONE");
        List<String> expected = new ArrayList<>();
        expected.addAll(Files.readAllLines(directory.resolve("rank-0.final")));
        expected.addAll(Files.readAllLines(directory.resolve("rank-1.final")));
        expected.sort(null);
        long deadline = System.currentTimeMillis() + WAIT_MS;
        List<String> last = List.of();
        while (System.currentTimeMillis() < deadline) {
            try {
                last = Files.readAllLines(Path.of(routerOut));
            } catch (NoSuchFileException notYet) {
                continue;
            }
           
        List<String> blocks = last.stream().filter(l -> l.startsWith("block ")).toList();
            if (blocks.equals(expected) && last.contains("outOfSync 0")) {
                break;
            }
            TimeUnit.MILLISECONDS.sleep(50); // polling the router's report with a bound
        }
        List<String> blocks = last.stream().filter(l -> l.startsWith("block ")).toList();
        assertEquals(expected, blocks, context + "; router said: " + last.stream().filter(l -> !l.startsWith("block "))
                .toList());
        String rank0Line = last.stream().filter(l -> l.startsWith("rank 0 ")).findFirst().orElseThrow();
        assertEquals(true, rank0Line.startsWith("rank 0 epoch 2 "), context + ": " + rank0Line);
        rank0.process().getOutputStream().close();
        rank1.process().getOutputStream().close();
    }
}
