package dev.kvtier;

import dev.kvtier.exec.ExecutionBackend;
import dev.kvtier.exec.HostExecutionBackend;

import java.nio.file.Path;

/** Picks the executor backend for a configuration and says why. */
final class BackendSelection {
    private BackendSelection() {
    }

    static ExecutionBackend open(KvTierConfig config, Path diskDirectory) {
        return switch (config.backend()) {
            case HOST -> new HostExecutionBackend(diskDirectory, config.copyThreads(), "requested by configuration");
            case AUTO -> new HostExecutionBackend(diskDirectory, config.copyThreads(), "no CUDA backend in this build yet");
            case CUDA -> throw new IllegalStateException("backend CUDA requested but this build has no CUDA backend yet");
        };
    }
}
