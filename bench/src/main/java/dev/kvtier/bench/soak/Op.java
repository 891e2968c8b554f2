package dev.kvtier.bench.soak;

/** The operations the soak runs, as the report counts them; {@link #OPEN} and {@link #CLOSE} are the cache's lifecycle. */
enum Op {
    /** Remove, then put the key's next version on a random tier. */
    PUT("put"),
    /** Read an own key, checked against the model: exactly the version last put. */
    READ_OWN("read (own key)"),
    /** Read another thread's key, checked against its owner's progress: a live version, whole. */
    READ_OTHER("read (other's key)"),
    /** Metadata: present exactly when the model says so. */
    GET("get"),
    /** Make resident on GPU or CPU (makes room). */
    ENSURE_RESIDENT("ensureResident"),
    /** Promote to GPU or CPU (no room made). */
    PROMOTE("promote"),
    /** Demote to CPU or DISK. */
    DEMOTE("demote"),
    /** Pin on GPU or CPU, read the pinned pages directly (where host-readable) and check them, close the pin. */
    PIN_PAGES("pin + read pages + close"),
    /** Remove the key. */
    REMOVE("remove"),
    /** Open a cache (at the start of each epoch). */
    OPEN("open"),
    /** Close a cache (at the end of each epoch). */
    CLOSE("close");

    final String label;

    Op(String label) {
        this.label = label;
    }
}
