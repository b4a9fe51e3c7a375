/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The InfiniBand CM wire format as the Linux rdma_cm sends it over RoCEv2:
 * a 256-byte MAD (24-byte common header, 232-byte CM payload), all fields
 * big-endian, located by MAD byte offset and MSB-first bit offset as in
 * IBTA Vol. 1 chapter 12 (and the kernel's ibta_vol1_c12.h).
 *
 * Shared by the module, its KUnit suites and userspace packet tests; it
 * depends only on fixed-width types.
 */
#ifndef _SOFTCM_WIRE_H
#define _SOFTCM_WIRE_H

#include <linux/types.h>

enum {
	SOFTCM_MAD_SIZE		= 256,
	SOFTCM_MAD_HDR_SIZE	= 24,
	SOFTCM_MAD_TID_OFF	= 8,
	SOFTCM_MAD_ATTR_ID_OFF	= 16,

	SOFTCM_MAD_BASE_VERSION	= 1,
	SOFTCM_MAD_CLASS_CM	= 0x07,
	SOFTCM_MAD_CM_VERSION	= 2,
	SOFTCM_MAD_METHOD_SEND	= 0x03,
};

/*
 * RoCEv2 framing of one CM MAD, as rxe sends it: UDP to port 4791, then a
 * BTH (UD SEND_ONLY to QP1) and a DETH (the GSI Q_Key, source QP 1), the
 * MAD, and a 4-byte invariant CRC.
 */
enum {
	SOFTCM_ROCE_PORT	= 4791,
	SOFTCM_BTH_SIZE		= 12,
	SOFTCM_DETH_SIZE	= 8,
	SOFTCM_ICRC_SIZE	= 4,
	/* BTH through ICRC: what a RoCEv2 UDP payload holds for a CM MAD */
	SOFTCM_ROCE_PAYLOAD	= SOFTCM_BTH_SIZE + SOFTCM_DETH_SIZE + 256 + SOFTCM_ICRC_SIZE,

	SOFTCM_BTH_OPCODE_UD_SEND_ONLY	= 0x64,
	/* the default P_Key: in the BTH, a REQ and a path record alike */
	SOFTCM_PKEY_DEFAULT		= 0xffff,
	SOFTCM_BTH_ACKREQ		= 0x80,		/* BTH byte 8: A */
	SOFTCM_BTH_PSN_MASK		= 0xffffff,
	SOFTCM_GSI_QPN			= 1,
};

#define SOFTCM_GSI_QKEY		0x80010000u

/* CM attribute ids (MAD header, SOFTCM_MAD_ATTR_ID_OFF). */
enum softcm_cm_attr {
	SOFTCM_CM_REQ		= 0x10,
	SOFTCM_CM_MRA		= 0x11,
	SOFTCM_CM_REJ		= 0x12,
	SOFTCM_CM_REP		= 0x13,
	SOFTCM_CM_RTU		= 0x14,
	SOFTCM_CM_DREQ		= 0x15,
	SOFTCM_CM_DREP		= 0x16,
	SOFTCM_CM_SIDR_REQ	= 0x17,
	SOFTCM_CM_SIDR_REP	= 0x18,
};

/* Private data each message carries (bytes up to the end of the MAD). */
enum {
	SOFTCM_REQ_PDATA	= 92,
	SOFTCM_MRA_PDATA	= 222,
	SOFTCM_REJ_PDATA	= 148,
	SOFTCM_REJ_ARI		= 72,
	SOFTCM_REP_PDATA	= 196,
	SOFTCM_RTU_PDATA	= 224,
	SOFTCM_DREQ_PDATA	= 220,
	SOFTCM_DREP_PDATA	= 224,
	SOFTCM_SIDR_REQ_PDATA	= 216,
	SOFTCM_SIDR_REP_PDATA	= 136,
	SOFTCM_SIDR_REP_INFO	= 72,
	SOFTCM_PDATA_MAX	= 224,
};

/* rdma_cm's private-data header, before the user's data in REQ/SIDR_REQ. */
enum {
	SOFTCM_CMA_HDR_SIZE	= 36,
	SOFTCM_CMA_VERSION	= 0,
};

/* A field: MAD byte offset, MSB-first bit offset in that byte, width. */
struct softcm_field {
	u16 off;
	u8 bit;
	u8 width;	/* 1..64 */
};

/* The common MAD header, host order. */
struct softcm_mad_hdr {
	u8 base_version;
	u8 mgmt_class;
	u8 class_version;
	u8 method;
	u16 status;
	u16 attr_id;
	u32 attr_mod;
	u64 tid;
};

/*
 * One CM message in host order; which members mean something depends on
 * @attr.  GIDs and the private data are raw bytes as on the wire.  Each
 * integer member is u8, u16, u32 or u64 by the width of its wire field
 * (up to 8, 16, 32 or 64 bits): wire.c relies on it.
 */
struct softcm_cm_msg {
	struct softcm_mad_hdr hdr;
	u8 attr;			/* enum softcm_cm_attr */

	u32 local_comm_id;		/* SIDR: request id */
	u32 remote_comm_id;
	u64 service_id;
	u64 ca_guid;
	u32 qkey;
	u32 qpn;			/* DREQ: remote QPN */
	u32 starting_psn;
	u32 vendor_id;
	u8 responder_resources;
	u8 initiator_depth;
	u8 remote_cm_timeout;		/* REQ */
	u8 local_cm_timeout;		/* REQ */
	u8 transport_type;		/* REQ */
	u8 flow_control;
	u8 retry_count;			/* REQ */
	u8 rnr_retry_count;
	u8 max_cm_retries;		/* REQ */
	u8 srq;
	u8 path_mtu;			/* REQ */
	u16 pkey;			/* REQ, SIDR_REQ */
	u16 local_lid;			/* REQ primary path */
	u16 remote_lid;
	u8 local_gid[16];
	u8 remote_gid[16];
	u32 flow_label;
	u8 packet_rate;
	u8 traffic_class;
	u8 hop_limit;
	u8 sl;
	u8 subnet_local;
	u8 local_ack_timeout;
	u8 target_ack_delay;		/* REP */
	u8 failover_accepted;		/* REP */
	u8 msg_type;			/* MRA: message MRAed; REJ: rejected */
	u8 service_timeout;		/* MRA */
	u16 reason;			/* REJ */
	u8 info_len;			/* REJ: ARI length; SIDR_REP: info */
	u8 status;			/* SIDR_REP */
	u8 info[SOFTCM_REJ_ARI];	/* REJ ARI, SIDR_REP additional info */

	u8 pdata_len;
	u8 pdata[SOFTCM_PDATA_MAX];
};

u64 softcm_wire_get(const u8 *mad, const struct softcm_field *f);
void softcm_wire_set(u8 *mad, const struct softcm_field *f, u64 val);

void softcm_roce_put_headers(u8 *bth, u32 psn);
int softcm_roce_check_headers(const u8 *bth, size_t len);

int softcm_wire_encode(const struct softcm_cm_msg *msg, u8 mad[SOFTCM_MAD_SIZE]);
int softcm_wire_decode(const u8 *mad, size_t len, struct softcm_cm_msg *msg);
unsigned int softcm_wire_pdata_size(u8 attr);

#endif /* _SOFTCM_WIRE_H */
