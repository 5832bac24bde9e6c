/* SPDX-License-Identifier: BSD-3-Clause */

#include "capture_kdrops.h"

#include <dirent.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <linux/if_packet.h>

#define MAX_SOCKETS 64

static struct {
	pthread_mutex_t lock;
	int fd[MAX_SOCKETS];
	unsigned int n;
	uint64_t drops;
} k = {.lock = PTHREAD_MUTEX_INITIALIZER};

unsigned int
th_kdrops_find(void)
{
	struct dirent *de;
	DIR *d = opendir("/proc/self/fd");
	int domain, version, fd;
	socklen_t len;

	if (d == NULL)
		return 0;
	pthread_mutex_lock(&k.lock);
	k.n = 0;
	while ((de = readdir(d)) != NULL && k.n < MAX_SOCKETS) {
		fd = atoi(de->d_name);
		len = sizeof(domain);
		if (de->d_name[0] == '.' || fd == dirfd(d) ||
			getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) != 0 ||
			domain != AF_PACKET)
			continue;
		/* net_af_packet rings are TPACKET_V2; libpcap's (V3) it reads itself, and
		 * net_pcap reports them as imissed: reading them too would split the count. */
		len = sizeof(version);
		if (getsockopt(fd, SOL_PACKET, PACKET_VERSION, &version, &len) != 0 ||
			version != TPACKET_V2)
			continue;
		k.fd[k.n++] = fd;
	}
	closedir(d);
	/* The driver made them when the port came up: what they dropped since, while the
	 * tables were set up, is the capture's loss too, and read with the rest. */
	k.drops = 0;
	pthread_mutex_unlock(&k.lock);
	return k.n;
}

uint64_t
th_kdrops_read(void)
{
	uint64_t drops;

	pthread_mutex_lock(&k.lock);
	for (unsigned int i = 0; i < k.n; i++) {
		struct tpacket_stats st;
		socklen_t len = sizeof(st);

		/* TPACKET_V2 rings fill struct tpacket_stats; V3 a larger one that starts alike. */
		if (getsockopt(k.fd[i], SOL_PACKET, PACKET_STATISTICS, &st, &len) == 0)
			k.drops += st.tp_drops;
	}
	drops = k.drops;
	pthread_mutex_unlock(&k.lock);
	return drops;
}
