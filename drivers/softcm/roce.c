// SPDX-License-Identifier: GPL-2.0
/*
 * RoCEv2 framing of CM MADs: the BTH and DETH in front of the MAD, exactly
 * as rxe builds and checks them, so that a stock RoCEv2 peer accepts what
 * we send.  The invariant CRC after the MAD is icrc.c's.
 */

#include <linux/string.h>
#include <kunit/visibility.h>
#include <softcm/wire.h>

#include "compat.h"

/*
 * BTH and DETH for a CM MAD; @bth has room for both.  rxe asks for an ACK
 * on the last packet of every message and numbers QP1's packets in
 * sequence, UD or not; a receiver ignores both for UD, but a capture
 * should not tell our packets from rxe's.
 */
void softcm_roce_put_headers(u8 *bth, u32 psn)
{
	u8 *deth = bth + SOFTCM_BTH_SIZE;

	memset(bth, 0, SOFTCM_BTH_SIZE + SOFTCM_DETH_SIZE);
	bth[0] = SOFTCM_BTH_OPCODE_UD_SEND_ONLY;
	bth[2] = SOFTCM_PKEY_DEFAULT >> 8;
	bth[3] = SOFTCM_PKEY_DEFAULT & 0xff;
	bth[7] = SOFTCM_GSI_QPN;
	bth[8] = SOFTCM_BTH_ACKREQ;
	bth[9] = psn >> 16;
	bth[10] = psn >> 8;
	bth[11] = psn;
	put_unaligned_be32(SOFTCM_GSI_QKEY, deth);
	deth[7] = SOFTCM_GSI_QPN;
}
EXPORT_SYMBOL_IF_KUNIT(softcm_roce_put_headers);

/*
 * What rxe checks before a MAD reaches the CM (rxe_recv.c's header and
 * Q_Key checks), each with its own errno so that drops can be counted by
 * reason: @len is the UDP payload, BTH through ICRC.
 */
int softcm_roce_check_headers(const u8 *bth, size_t len)
{
	const u8 *deth = bth + SOFTCM_BTH_SIZE;
	u16 pkey = get_unaligned_be16(bth + 2);

	if (len != SOFTCM_ROCE_PAYLOAD)
		return -EMSGSIZE;
	if (bth[0] != SOFTCM_BTH_OPCODE_UD_SEND_ONLY)
		return -EOPNOTSUPP;
	if (bth[1] & 0x3f)		/* pad count and transport version */
		return -EPROTO;
	if ((get_unaligned_be32(bth + 4) & 0xffffff) != SOFTCM_GSI_QPN)
		return -ENOENT;
	/* rxe's pkey_match() against its only P_Key, 0xffff */
	if ((pkey & 0x7fff) != 0x7fff)
		return -EACCES;
	if (get_unaligned_be32(deth) != SOFTCM_GSI_QKEY)
		return -EPERM;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(softcm_roce_check_headers);
