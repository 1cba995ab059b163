/*
 * mcast.pml -- a Promela model of lfccheck's MCAST model (protocols/mcast
 * on protocols/ucast), for a side-by-side comparison with SPIN.  Written
 * from the Go model; see README.md in this directory.
 *
 * Configuration, as `lfccheck check --protocol mcast --nodes P --credits C
 * --packets K --tree T` builds it: one broadcast group of all P nodes, one
 * tree per node (tree t is rooted at node t), every node multicasting K
 * packets on its own tree.  Macros (spin -DNAME=value ...):
 *
 *   P        nodes, 2..6                          (default 3)
 *   C        send credits per ordered pair, 1..63 (default 1)
 *   K        packets per root, 1..31              (default 1)
 *   TREE     0 binary, 1 binomial, 2 chain        (default 0)
 *   REFRESH  CREDIT_REFRESH                       (default max(1, C/2))
 *   HB       host receive buffers per host        (default 1)
 *   SB       NI send pool size                    (default 2)
 *   EXACT    0: stored packets (receive buffers, host queue, blocked
 *            forward descriptors) keep no piggybacked credit count (the
 *            field is dead once accept_new_credits has read it), as in
 *            lfccheck's model; 1: they keep the count they arrived with,
 *            as lfccheck's model did before it dropped the dead field
 *            (default 0)
 *   INV      1: assert credit conservation and the pool bound after
 *            every step                           (default 1)
 *   FUSED    1: a copy and the process step it enables are one step,
 *            as lfccheck's ample-set fusion takes them (default 0;
 *            see below)
 *
 * Atomicity is lfccheck's: every option of the one `do` loop below is a
 * single d_step, so every SPIN state is a global state of lfccheck's
 * model, apart from the end of the process after `break` (README.md):
 *   launch(n)     "host n launch"   send-pool allocation + event_multicast
 *   deliver(i,j)  "deliver i->j"    event_packet_received incl.
 *                                   accept_new_credits and forwarding
 *   copy(n)       "ni n copy"       oldest uncopied buffer -> host buffer,
 *                                   release if no forward is pending
 *   process(n)    "host n process"  pop the host queue
 *
 * With FUSED (-DFUSED, the form of lfccheck's default search) there is no
 * process option: copy(n) is followed by process(n) in the same d_step.
 * lfccheck declares "host n process" ample (it commutes with everything,
 * nothing disables it, no property reads the host queue) and applies every
 * enabled one right after the step that enabled it (properties'
 * checker_reduction.go, fuse); only a copy makes a host queue non-empty,
 * so its fused step is exactly "ni n copy" then "host n process", and no
 * stored state has a non-empty host queue.  The states are then those of
 * `lfccheck check --symmetry off --por off` (fusion alone), plus SPIN's
 * end-of-process states.
 *
 * Deadlock: a state with no enabled option that is not FINISHED is an
 * invalid end state (the loop has no end label); a FINISHED state leaves
 * the loop and ends the process, a valid end state.
 * FIFO and exactly-once are asserted at every copy (a history counter per
 * host and tree, the equivalent of lfccheck's stream log).
 */

#ifndef P
#define P 3
#endif
#ifndef C
#define C 1
#endif
#ifndef K
#define K 1
#endif
#ifndef TREE
#define TREE 0
#endif
#ifndef REFRESH
#if C / 2 < 1
#define REFRESH 1
#else
#define REFRESH (C / 2)
#endif
#endif
#ifndef HB
#define HB 1
#endif
#ifndef SB
#define SB 2
#endif
#ifndef EXACT
#define EXACT 0
#endif
#ifndef INV
#define INV 1
#endif
#ifndef FUSED
#define FUSED 0
#endif

#if P < 2 || P > 6
#error "P must be in 2..6"
#endif
#if C < 1 || C > 63 || K < 1 || K > 31
#error "C must be in 1..63 and K in 1..31"
#endif

#define NPAIR  (P * (P - 1))
/* index of the ordered pair (n, p), n != p */
#define PI(n, p) ((n) * (P - 1) + (p) - ((p) > (n) -> 1 : 0))
#define RCAP   ((P - 1) * C)          /* receive buffers per NI (pool bound)  */
#define LCAP   (2 * C)                /* C data + at most C CREDIT packets    */
#define BCAP   (SB + (P - 1) * C)     /* own launches + forwards, per dest    */

/*
 * Packed entries (shorts, 15 bits): flag | credits | tree | seq, where flag
 * is a blocked descriptor's "forward", a link packet's tag (1: CREDIT) or a
 * receive buffer's "copied"; credits is the packet header's piggybacked
 * credit count.
 */
#define SEQB   32
#define TRB    8
#define CRB    64
#define FLAGV  (SEQB * TRB * CRB)
#define PACK(f, cr, tr, sq) ((((f) * CRB + (cr)) * TRB + (tr)) * SEQB + (sq))
#define E_SEQ(e)  ((e) % SEQB)
#define E_TREE(e) (((e) / SEQB) % TRB)
#define E_CRED(e) (((e) / (SEQB * TRB)) % CRB)
#define E_FLAG(e) ((e) / FLAGV)

#define DATA   0                      /* MULTICAST                            */
#define CREDIT 1                      /* explicit CREDIT packet               */

/* ---- state ------------------------------------------------------------ */

/* per ordered pair PI(n, p): NI n's protocol control block for peer p */
byte  sc[NPAIR] = C;                  /* send_credits                         */
byte  fc[NPAIR];                      /* free_credits (owed to p)             */
byte  bn[NPAIR];                      /* blocked_sends length                 */
short bq[NPAIR * BCAP];               /* blocked_sends, head first            */

/* per ordered pair PI(i, j): the FIFO link i->j, head first */
byte  ln[NPAIR];
short lk[NPAIR * LCAP];

/* per NI: receive buffers in arrival order (lfccheck's NI.Recv) */
byte  rn[P];
short rb[P * RCAP];
byte  rpend[P * RCAP];                /* forwards not yet transmitted         */

/* per NI: send packets in allocation order (tree = the NI's own) */
byte  sn[P];
byte  sseq[P * SB];
byte  sref[P * SB];                   /* descriptors still referring to it    */

/* per host */
byte  nxt[P];                         /* work items launched                  */
byte  qn[P];                          /* host queue (full host buffers)       */
short hq[P * HB];                     /* flag unused                          */
byte  dlv[P * P];                     /* h*P+t: packets of tree t delivered   */

/* derived counters (functions of the state above, so they add no state) */
byte  ru[P];                          /* uncopied receive buffers per NI      */
byte  nfl;                            /* packets on all links                 */

/* ---- scratch (not part of the state vector) ---------------------------- */
hidden int t_idx, t_j, t_low, t_k, t_par;
hidden byte kid[8];
hidden byte nkid;
hidden int a_i, a_to, a_s, a_f, a_x, a_d, a_t, a_c, a_e;
hidden int x_i, x_j, x_n, x_c, x_r, x_e, x_b;

/* ---- trees (protocols/topology: family tree of root 0 over 0..P-1, node i
 *      renamed to (i + t) mod P for the tree of root t) ------------------ */

/* kid[0..nkid-1] := children of node n in tree t, in forwarding order */
inline kids(t, n) {
	nkid = 0;
	t_idx = (n + P - t) % P;
#if TREE == 0
	/* binary: children of index i are 2i+1, 2i+2 */
	t_j = 2 * t_idx + 1;
	do
	:: t_j <= 2 * t_idx + 2 && t_j < P -> kid[nkid] = (t_j + t) % P; nkid++; t_j++
	:: else -> break
	od
#elif TREE == 1
	/* binomial: i + 2^k for every 2^k below the lowest set bit of i (every
	 * 2^k < P for the root), farthest first */
	if
	:: t_idx == 0 -> t_low = P
	:: else -> t_low = t_idx & (-t_idx)
	fi;
	t_k = 64;
	do
	:: t_k >= 1 ->
		if
		:: t_k < t_low && t_idx + t_k < P -> kid[nkid] = (t_idx + t_k + t) % P; nkid++
		:: else -> skip
		fi;
		t_k = t_k / 2
	:: else -> break
	od
#elif TREE == 2
	/* chain: the child of i is i+1 */
	if
	:: t_idx + 1 < P -> kid[0] = (t_idx + 1 + t) % P; nkid = 1
	:: else -> skip
	fi
#else
#error "TREE must be 0 (binary), 1 (binomial) or 2 (chain)"
#endif
}

/* t_par := parent of node n (not the root) in tree t */
inline parent(t, n) {
	t_idx = (n + P - t) % P;
#if TREE == 0
	t_par = ((t_idx - 1) / 2 + t) % P
#elif TREE == 1
	t_par = (t_idx - (t_idx & (-t_idx)) + t) % P
#else
	t_par = (t_idx - 1 + t) % P
#endif
}

/* ---- UCAST (Fig. 4.2, 4.3) --------------------------------------------- */

/* put entry e on the link from -> to */
inline transmit(from, to, e) {
	x_c = PI(from, to);
	lk[x_c * LCAP + ln[x_c]] = e;
	ln[x_c]++;
	nfl++;
	assert(ln[x_c] <= LCAP)
}

/* return_credit_to: an explicit CREDIT packet once REFRESH are owed */
inline return_credit(n, to) {
	x_b = PI(n, to);
	fc[x_b]++;
	if
	:: fc[x_b] >= REFRESH ->
		transmit(n, to, PACK(CREDIT, fc[x_b], 0, 0));
		fc[x_b] = 0
	:: else -> skip
	fi
}

/* event_packet_released for receive buffer a_i of n: free it, and return
 * a credit to n's parent in the packet's tree (§4.2.5) */
inline release(n) {
	parent(E_TREE(rb[n * RCAP + a_i]), n);
	a_to = t_par;
	x_i = a_i;
	do
	:: x_i + 1 < rn[n] ->
		rb[n * RCAP + x_i] = rb[n * RCAP + x_i + 1];
		rpend[n * RCAP + x_i] = rpend[n * RCAP + x_i + 1];
		x_i++
	:: else -> break
	od;
	rb[n * RCAP + rn[n] - 1] = 0;
	rpend[n * RCAP + rn[n] - 1] = 0;
	rn[n]--;
	return_credit(n, a_to)
}

/* send_packet of a data descriptor (forward?, tree, seq) from n to d:
 * piggyback the owed credits, transmit, account for the descriptor */
inline send_data(n, d, fwd, tr, sq) {
	x_b = PI(n, d);
	transmit(n, d, PACK(DATA, fc[x_b], tr, sq));
	fc[x_b] = 0;
	if
	:: fwd ->
		a_i = 0;
		do
		:: a_i < rn[n] && !(E_TREE(rb[n * RCAP + a_i]) == tr && E_SEQ(rb[n * RCAP + a_i]) == sq) -> a_i++
		:: else -> break
		od;
		assert(a_i < rn[n] && rpend[n * RCAP + a_i] > 0);
		rpend[n * RCAP + a_i]--;
		if
		:: rpend[n * RCAP + a_i] == 0 && E_FLAG(rb[n * RCAP + a_i]) -> release(n)
		:: else -> skip
		fi
	:: else ->
		a_s = 0;
		do
		:: a_s < sn[n] && sseq[n * SB + a_s] != sq -> a_s++
		:: else -> break
		od;
		assert(a_s < sn[n] && sref[n * SB + a_s] > 0);
		sref[n * SB + a_s]--;
		if
		:: sref[n * SB + a_s] == 0 ->
			do
			:: a_s + 1 < sn[n] ->
				sseq[n * SB + a_s] = sseq[n * SB + a_s + 1];
				sref[n * SB + a_s] = sref[n * SB + a_s + 1];
				a_s++
			:: else -> break
			od;
			sseq[n * SB + sn[n] - 1] = 0;
			sref[n * SB + sn[n] - 1] = 0;
			sn[n]--
		:: else -> skip
		fi
	fi
}

/* credit_send: transmit with a credit, or queue on blocked_sends[d]; cr is
 * the credit field of the stored packet (kept only for EXACT) */
inline credit_send(n, d, fwd, tr, sq, cr) {
	x_b = PI(n, d);
	if
	:: sc[x_b] > 0 ->
		sc[x_b]--;
		send_data(n, d, fwd, tr, sq)
	:: else ->
		bq[x_b * BCAP + bn[x_b]] = PACK(fwd, cr, tr, sq);
		bn[x_b]++;
		assert(bn[x_b] <= BCAP)
	fi
}

/* accept_new_credits: add cr, then transmit blocked descriptors for the
 * sender in FIFO order while credits last */
inline accept_credits(n, from, cr) {
	sc[PI(n, from)] = sc[PI(n, from)] + cr;
	do
	:: bn[PI(n, from)] > 0 && sc[PI(n, from)] > 0 ->
		x_j = PI(n, from) * BCAP;
		a_e = bq[x_j];
		x_i = 0;
		do
		:: x_i + 1 < bn[PI(n, from)] -> bq[x_j + x_i] = bq[x_j + x_i + 1]; x_i++
		:: else -> break
		od;
		bq[x_j + bn[PI(n, from)] - 1] = 0;
		bn[PI(n, from)]--;
		sc[PI(n, from)]--;
		send_data(n, from, E_FLAG(a_e), E_TREE(a_e), E_SEQ(a_e))
	:: else -> break
	od
}

/* ---- the four actions ------------------------------------------------- */

#define CAN_LAUNCH(n) (nxt[n] < K && sn[n] < SB)

/* "host n launch": allocate a send packet, event_multicast (Fig. 4.6) */
inline launch(n) {
	nxt[n]++;
	kids(n, n);
	sseq[n * SB + sn[n]] = nxt[n];
	sref[n * SB + sn[n]] = nkid;
	sn[n]++;
	a_c = 0;
	do
	:: a_c < nkid -> credit_send(n, kid[a_c], 0, n, nxt[n], 0); a_c++
	:: else -> break
	od
}

/* "deliver i->j": event_packet_received (Fig. 4.3, 4.7): accept the
 * piggybacked credits first, then a MULTICAST packet takes a buffer of
 * i's pool partition and is forwarded to j's children in its tree */
inline deliver(i, j) {
	x_j = PI(i, j) * LCAP;
	a_e = lk[x_j];
	x_i = 0;
	do
	:: x_i + 1 < ln[PI(i, j)] -> lk[x_j + x_i] = lk[x_j + x_i + 1]; x_i++
	:: else -> break
	od;
	lk[x_j + ln[PI(i, j)] - 1] = 0;
	ln[PI(i, j)]--;
	nfl--;
	a_t = E_FLAG(a_e); a_f = E_TREE(a_e); a_x = E_SEQ(a_e);
#if EXACT
	a_d = E_CRED(a_e);
#else
	a_d = 0;
#endif
	accept_credits(j, i, E_CRED(a_e));
	if
	:: a_t == DATA ->
		kids(a_f, j);
		rb[j * RCAP + rn[j]] = PACK(0, a_d, a_f, a_x);
		rpend[j * RCAP + rn[j]] = nkid;
		rn[j]++;
		ru[j]++;
		assert(rn[j] <= RCAP);
		a_c = 0;
		do
		:: a_c < nkid -> credit_send(j, kid[a_c], 1, a_f, a_x, a_d); a_c++
		:: else -> break
		od
	:: else -> skip
	fi
}

#define CAN_COPY(n) (qn[n] < HB && ru[n] > 0)

/* "ni n copy": the oldest uncopied receive buffer into a free host buffer;
 * release it at once if no forward is pending */
inline copy(n) {
	a_i = 0;
	do
	:: a_i < rn[n] && E_FLAG(rb[n * RCAP + a_i]) -> a_i++
	:: else -> break
	od;
	x_c = n * RCAP + a_i;
	rb[x_c] = rb[x_c] + FLAGV;
	ru[n]--;
	hq[n * HB + qn[n]] = rb[x_c] - FLAGV;
	qn[n]++;
	/* fifo and exactly-once: the next packet of its tree, exactly */
	assert(E_SEQ(rb[x_c]) == dlv[n * P + E_TREE(rb[x_c])] + 1);
	dlv[n * P + E_TREE(rb[x_c])]++;
	if
	:: rpend[x_c] == 0 -> release(n)
	:: else -> skip
	fi
}

/* "host n process": the client consumes its oldest delivered packet */
inline process(n) {
	x_i = 0;
	do
	:: x_i + 1 < qn[n] -> hq[n * HB + x_i] = hq[n * HB + x_i + 1]; x_i++
	:: else -> break
	od;
	hq[n * HB + qn[n] - 1] = 0;
	qn[n]--
}

/* ---- invariants --------------------------------------------------------- */

/* per ordered pair s -> r (ucast.CreditConservation): s's credits for r +
 * data packets in flight s->r + r's buffers from s + credits r owes s +
 * credits in flight r->s == C; and r holds at most C buffers from s */
inline invariants() {
#if INV
	x_i = 0;
	do
	:: x_i < P ->
		x_j = 0;
		do
		:: x_j < P ->
			if
			:: x_i != x_j ->
				x_r = sc[PI(x_i, x_j)] + fc[PI(x_j, x_i)];
				x_c = 0;
				do
				:: x_c < ln[PI(x_i, x_j)] ->
					x_e = lk[PI(x_i, x_j) * LCAP + x_c];
					if :: E_FLAG(x_e) == DATA -> x_r++ :: else -> skip fi;
					x_c++
				:: else -> break
				od;
				x_c = 0;
				do
				:: x_c < ln[PI(x_j, x_i)] -> x_r = x_r + E_CRED(lk[PI(x_j, x_i) * LCAP + x_c]); x_c++
				:: else -> break
				od;
				x_c = 0; x_n = 0;
				do
				:: x_c < rn[x_j] ->
					parent(E_TREE(rb[x_j * RCAP + x_c]), x_j);
					if :: t_par == x_i -> x_n++ :: else -> skip fi;
					x_c++
				:: else -> break
				od;
				assert(x_n <= C);            /* pool bound */
				assert(x_r + x_n == C)       /* credit conservation */
			:: else -> skip
			fi;
			x_j++
		:: else -> break
		od;
		x_i++
	:: else -> break
	od
#else
	skip
#endif
}

/* ---- the system ---------------------------------------------------------- */

#define NQ(n) (nxt[n] == K && qn[n] == 0 && rn[n] == 0 && sn[n] == 0)

/* ucast.Finished: every packet launched, nothing in flight, pooled, queued
 * or unprocessed (owed credits below REFRESH are allowed).  Blocked
 * descriptors need no test: each refers to an occupied receive buffer or
 * a send packet. */
#if P == 2
#define FINISHED (nfl == 0 && NQ(0) && NQ(1))
#elif P == 3
#define FINISHED (nfl == 0 && NQ(0) && NQ(1) && NQ(2))
#elif P == 4
#define FINISHED (nfl == 0 && NQ(0) && NQ(1) && NQ(2) && NQ(3))
#elif P == 5
#define FINISHED (nfl == 0 && NQ(0) && NQ(1) && NQ(2) && NQ(3) && NQ(4))
#else
#define FINISHED (nfl == 0 && NQ(0) && NQ(1) && NQ(2) && NQ(3) && NQ(4) && NQ(5))
#endif

/* the trailing skip keeps every loop exit inside its d_step */
#if FUSED
/* copy then process, one step; the invariants do not read the host queue,
 * so checking them after both is checking them after the copy */
#define NODE(n) \
	:: d_step { CAN_LAUNCH(n) -> launch(n); invariants(); skip } \
	:: d_step { CAN_COPY(n) -> copy(n); process(n); invariants(); skip }
#else
#define NODE(n) \
	:: d_step { CAN_LAUNCH(n) -> launch(n); invariants(); skip } \
	:: d_step { CAN_COPY(n) -> copy(n); invariants(); skip } \
	:: d_step { qn[n] > 0 -> process(n); skip }
#endif

#define LINK(i, j) \
	:: d_step { ln[PI(i, j)] > 0 -> deliver(i, j); invariants(); skip }

active proctype mcast()
{
	do
	NODE(0)
	NODE(1)
	LINK(0, 1) LINK(1, 0)
#if P > 2
	NODE(2)
	LINK(0, 2) LINK(2, 0) LINK(1, 2) LINK(2, 1)
#endif
#if P > 3
	NODE(3)
	LINK(0, 3) LINK(3, 0) LINK(1, 3) LINK(3, 1) LINK(2, 3) LINK(3, 2)
#endif
#if P > 4
	NODE(4)
	LINK(0, 4) LINK(4, 0) LINK(1, 4) LINK(4, 1) LINK(2, 4) LINK(4, 2) LINK(3, 4) LINK(4, 3)
#endif
#if P > 5
	NODE(5)
	LINK(0, 5) LINK(5, 0) LINK(1, 5) LINK(5, 1) LINK(2, 5) LINK(5, 2) LINK(3, 5) LINK(5, 3)
	LINK(4, 5) LINK(5, 4)
#endif
	:: FINISHED -> break
	od
}
