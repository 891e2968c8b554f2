/** Loader for libcudart and a thin, checked, owner-visible layer over the raw bindings. */
package dev.kvtier.cuda;
