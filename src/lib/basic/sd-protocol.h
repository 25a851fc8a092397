/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * systemd's two datagram protocols, spoken without libsystemd: sd_notify(3)
 * to $NOTIFY_SOCKET, and the journal's native protocol to its socket.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#define JOURNAL_SOCKET "/run/systemd/journal/socket"

/* The events' MESSAGE_IDs (journalctl MESSAGE_ID=...; kubemount(8), JOURNAL). */
#define MESSAGE_ID_MOUNT "e5b76ef02c034305ba5591198be5de85"
#define MESSAGE_ID_UMOUNT "a0a3342d1d454d738271f0fe2819e5fd"
#define MESSAGE_ID_REFUSED "b4f359f9366048d596303eaee163c620"
#define MESSAGE_ID_CONTAINER_START "18490d50b30340df86fa8e2d9c621172"
#define MESSAGE_ID_CONTAINER_EXIT "3abb435c77ea49c8a6b3d08e0973fd37"

/*
 * Takes $NOTIFY_SOCKET out of the environment (what we start must not speak
 * for us) and keeps it for sd_notify_send().  Call once, early.
 */
void sd_notify_take(void);
/* Sends STATE ("READY=1", "STOPPING=1\nSTATUS=...") to the socket taken; 0 when there is none, 1 sent, -errno. */
int sd_notify_send(const char *state);

/*
 * Connects a socket to the journal's socket as the calling thread's mount
 * namespace sees it, and keeps it: later records go there whichever
 * namespace the process is in then (a kubelet container's kubemount reaches
 * the host's journal).  0, or -errno when none listens there.
 */
int journal_connect(void);
/*
 * journal_connect() at the next entry into the host's mount namespace
 * (km_host_run), tried once: a caller that enters it anyway (a mount, an
 * unmount) needs no entry of its own for the journal.
 */
void journal_connect_in_host(void);
/* In the host's namespace just entered: the connect journal_connect_in_host() asked for, if any. */
void journal_connect_asked(void);
/* Whether journal_connect() reached a journal. */
bool journal_connected(void);
/* Whether a journal listens: journal_connect() reached one, or its socket exists here. */
bool journal_present(void);
/*
 * The native record of MESSAGE at syslog PRIORITY with FIELDS ("KEY=VALUE",
 * NULL-terminated, may be NULL): KEY=VALUE lines, a value with a newline in
 * the binary form (KEY\n, its length as 64-bit little endian, the value, \n).
 * A field whose name the journal would refuse is left out.  NULL on ENOMEM.
 */
char *journal_record(int priority, const char *message, const char *const *fields, size_t *size);
/* Sends that record to the journal's socket: 0 or -errno. */
int journal_send(int priority, const char *message, const char *const *fields);
