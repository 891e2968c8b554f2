package dev.kvtier.cluster;

/** The contract on the embedded bus; one object serves every "process". */
class InProcessSyncBusTest extends SyncBusContract {
    @Override
    protected SyncBus newBus(int retainedMessages) {
        return new InProcessSyncBus(retainedMessages);
    }

    @Override
    protected SyncBus sameStream(SyncBus bus) {
        return bus;
    }
}
