package dev.kvtier.remote;

/** The store contract on a private {@link InProcessRemoteBlockStore}. */
class InProcessRemoteBlockStoreContractTest extends RemoteBlockStoreContract {
    @Override
    protected RemoteBlockStore newStore() {
        return new InProcessRemoteBlockStore();
    }
}
