package dev.kvtier.exec.host;

import dev.kvtier.exec.CopyEngineContract;
import dev.kvtier.exec.ExecutionBackend;

import java.nio.file.Path;

/** The copy-engine contract on the host backend: {@code MemorySegment.copy} on two threads. */
class HostCopyEngineContractTest extends CopyEngineContract {
    @Override
    protected ExecutionBackend openBackend(Path directory) {
        return new HostExecutionBackend(directory, 2, "contract test");
    }
}
