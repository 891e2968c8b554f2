package dev.kvtier.cluster;

/** The end-to-end contract with ranks and router sharing one in-process bus. */
class InProcessClusterTest extends ClusterEndToEndContract {
    private InProcessSyncBus bus;

    @Override
    protected void newStream(int retainedMessages) {
        bus = new InProcessSyncBus(retainedMessages);
    }

    @Override
    protected SyncBus handle() {
        return new SharedHandle(bus);
    }

    /** Every participant closes its handle; the shared bus itself stays open for the others. */
    private record SharedHandle(InProcessSyncBus bus) implements SyncBus {
        @Override
        public long publish(byte[] message) {
            return bus.publish(message);
        }

        @Override
        public long firstSequence() {
            return bus.firstSequence();
        }

        @Override
        public long lastSequence() {
            return bus.lastSequence();
        }

        @Override
        public Subscription subscribe(long fromSequence, EventHandler handler) {
            return bus.subscribe(fromSequence, handler);
        }

        @Override
        public void sendControl(byte[] message) {
            bus.sendControl(message);
        }

        @Override
        public Subscription subscribeControl(ControlHandler handler) {
            return bus.subscribeControl(handler);
        }

        @Override
        public String streamIdentity() {
            return bus.streamIdentity();
        }

        @Override
        public String describe() {
            return bus.describe();
        }

        @Override
        public void close() {
        }
    }
}
