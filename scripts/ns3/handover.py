"""Case A of docs/ns3-spec.md: a two-cell X2 handover in ns-3 LENA, one TCP
download (issue 29). Prints one JSON object.

    $NS3_VENV/bin/python scripts/ns3/handover.py    (make ns3-compare)

The parameters are the spec's items, named below; what LENA cannot express
as the spec says is noted where it is set and in docs/simulator.md
"Against ns-3 LENA".
"""

from __future__ import annotations

import time

import lena
from lena import ns

# ns3-spec A: two sites, 500 m apart, 25 m high, 43 dBm, EARFCN 100
# (2.12 GHz downlink, band 1), 20 MHz = 100 RB; UE 1.5 m high.
SITES_X_M = (0.0, 500.0)
SITE_HEIGHT_M = 25.0
ENB_TX_POWER_DBM = 43.0
DL_EARFCN = 100
UL_EARFCN = 18100  # band 1's uplink pair of DL EARFCN 100 (TS 36.101 5.7.3)
BANDWIDTH_RB = 100
UE_HEIGHT_M = 1.5
# ns3-spec A: from (100, 0) to (400, 0) at 10 m/s (30 s), then still; 40 s.
UE_START_X_M = 100.0
UE_END_X_M = 400.0
UE_SPEED_MPS = 10.0
SIM_S = 40.0
# ns3-spec A: A3 on RSRP, offset 0 dB (A3RsrpHandoverAlgorithm's fixed
# a3Offset), hysteresis 3 dB, TTT 256 ms, L3 filter coefficient 4.
HYSTERESIS_DB = 3.0
TIME_TO_TRIGGER_MS = 256
RSRP_FILTER_COEFFICIENT = 4
# ns3-spec A: CUBIC, 1448-byte segments, server 10 ms one way behind the
# core, from 1 s; RLC AM. Buffers: tcran's defaults (5 MB RLC transmit
# buffer, 4 MiB send buffer, 6 MB receive window), which the spec leaves
# to each tool.
SEGMENT_B = 1448
CORE_DELAY_MS = 10.0
TCP_START_S = 1.0
RLC_BUFFER_B = 5_000_000
SEND_BUFFER_B = 4 * 1024 * 1024
RECEIVE_BUFFER_B = 6_000_000
# ns3-spec A: throughput per 100 ms, and in the 1 s before / 2 s after
# each handover.
BIN_S = 0.1
BEFORE_S = 1.0
AFTER_S = 2.0
PORT = 9000


def build():
    """Returns the helpers, which must outlive the run: the EPC helper's
    destructor disposes of the PGW node, and Python would collect it when
    build() returns."""
    lena.tcp_defaults(SEGMENT_B, SEND_BUFFER_B, RECEIVE_BUFFER_B)
    ns.Config.SetDefault("ns3::LteEnbRrc::EpsBearerToRlcMapping", ns.StringValue("RlcAmAlways"))
    ns.Config.SetDefault("ns3::LteRlcAm::MaxTxBufferSize", ns.UintegerValue(RLC_BUFFER_B))
    ns.Config.SetDefault("ns3::LteEnbRrc::RsrpFilterCoefficient",
                         ns.UintegerValue(RSRP_FILTER_COEFFICIENT))
    ns.Config.SetDefault("ns3::LteEnbPhy::TxPower", ns.DoubleValue(ENB_TX_POWER_DBM))

    lte = ns.CreateObject[ns.LteHelper]()
    epc, server, server_addr = lena.epc_with_server(lte, CORE_DELAY_MS)
    # TR 38.901 UMa, NLOS always, no shadowing; LteHelper sets the model's
    # frequency from each device's EARFCN.
    lte.SetAttribute("PathlossModel", ns.StringValue("ns3::ThreeGppUmaPropagationLossModel"))
    lte.SetPathlossModelAttribute("ShadowingEnabled", ns.BooleanValue(False))
    never_los = ns.CreateObject[ns.NeverLosChannelConditionModel]()
    lte.SetPathlossModelAttribute("ChannelConditionModel", ns.PointerValue(never_los))
    lte.SetHandoverAlgorithmType("ns3::A3RsrpHandoverAlgorithm")
    lte.SetHandoverAlgorithmAttribute("Hysteresis", ns.DoubleValue(HYSTERESIS_DB))
    lte.SetHandoverAlgorithmAttribute("TimeToTrigger",
                                      ns.TimeValue(ns.MilliSeconds(TIME_TO_TRIGGER_MS)))
    lte.SetEnbDeviceAttribute("DlEarfcn", ns.UintegerValue(DL_EARFCN))
    lte.SetEnbDeviceAttribute("UlEarfcn", ns.UintegerValue(UL_EARFCN))
    lte.SetEnbDeviceAttribute("DlBandwidth", ns.UintegerValue(BANDWIDTH_RB))
    lte.SetEnbDeviceAttribute("UlBandwidth", ns.UintegerValue(BANDWIDTH_RB))

    enbs = ns.NodeContainer()
    enbs.Create(len(SITES_X_M))
    positions = ns.CreateObject[ns.ListPositionAllocator]()
    for x in SITES_X_M:
        positions.Add(ns.Vector(x, 0.0, SITE_HEIGHT_M))
    mobility = ns.MobilityHelper()
    mobility.SetMobilityModel("ns3::ConstantPositionMobilityModel")
    mobility.SetPositionAllocator(positions)
    mobility.Install(enbs)

    ues = ns.NodeContainer()
    ues.Create(1)
    walk = ns.MobilityHelper()
    walk.SetMobilityModel("ns3::WaypointMobilityModel")
    walk.Install(ues)
    waypoints = ues.Get(0).GetObject[ns.WaypointMobilityModel]()
    travel_s = (UE_END_X_M - UE_START_X_M) / UE_SPEED_MPS
    waypoints.AddWaypoint(ns.Waypoint(ns.Seconds(0), ns.Vector(UE_START_X_M, 0, UE_HEIGHT_M)))
    waypoints.AddWaypoint(ns.Waypoint(ns.Seconds(travel_s), ns.Vector(UE_END_X_M, 0, UE_HEIGHT_M)))

    enb_devs = lte.InstallEnbDevice(enbs)
    ue_devs = lte.InstallUeDevice(ues)
    lena.ues_on_epc(epc, ues, ue_devs)
    lte.Attach(ue_devs.Get(0), enb_devs.Get(0))
    lte.AddX2Interface(enbs)

    ue_addr = ues.Get(0).GetObject[ns.Ipv4]().GetAddress(1, 0).GetLocal()
    sink = ns.PacketSinkHelper("ns3::TcpSocketFactory",
                               ns.InetSocketAddress(ns.Ipv4Address.GetAny(), PORT).ConvertTo())
    sink_app = sink.Install(ues.Get(0)).Get(0)
    bulk = ns.BulkSendHelper("ns3::TcpSocketFactory", ns.InetSocketAddress(ue_addr, PORT).ConvertTo())
    bulk.SetAttribute("MaxBytes", ns.UintegerValue(0))
    bulk.SetAttribute("SendSize", ns.UintegerValue(SEGMENT_B))
    bulk_apps = bulk.Install(server)
    bulk_apps.Start(ns.Seconds(TCP_START_S))
    assert lena.sinks.RecordDeliveries(sink_app)
    lena.sinks.RecordHandovers()
    return lte, epc


def handovers(records: list[tuple[float, int]]) -> list[dict]:
    """One row per UE handover: UE-side start (the RRC reconfiguration with
    mobility control info arriving) and end (the target's RACH done, the
    reconfiguration complete sent), the goodput around it, and the longest
    silence of the download around it."""
    events = [(e.t_ns * 1e-9, e.kind, e.cell, e.target) for e in lena.sinks.Handovers()]
    rows = []
    for t, kind, cell, target in events:
        if kind != 0:
            continue
        end = next((u for u, k, _, _ in events if k in (1, 4) and u >= t), None)
        ok = any(k == 1 and u == end for u, k, _, _ in events)
        enb = next((u for u, k, c, _ in events if k == 2 and c == cell and u <= t), None)
        # The silence: the longest gap between two deliveries among those
        # from BEFORE_S before the handover to AFTER_S after it ends.
        lo, hi = t - BEFORE_S, (end if end is not None else t) + AFTER_S
        times = [u for u, _ in records if lo <= u <= hi]
        gaps = [(b - a, a) for a, b in zip(times, times[1:])]
        gap, gap_from = max(gaps) if gaps else (None, None)
        rows.append(
            {
                "t_s": round(t, 4),
                "x_m": round(min(UE_END_X_M, UE_START_X_M + UE_SPEED_MPS * t), 2),
                "source_cell": int(cell),
                "target_cell": int(target),
                "enb_decision_t_s": None if enb is None else round(enb, 4),
                "end_t_s": None if end is None else round(end, 4),
                "ok": ok,
                "rrc_interruption_ms": None if end is None else round((end - t) * 1e3, 2),
                "no_data_ms": None if gap is None else round(gap * 1e3, 2),
                "no_data_from_s": None if gap_from is None else round(gap_from, 4),
                "mbps_1s_before": round(lena.mbps(records, t - BEFORE_S, t), 3),
                "mbps_2s_after": None
                if end is None
                else round(lena.mbps(records, end, end + AFTER_S), 3),
            }
        )
    return rows


def main() -> None:
    t0 = time.perf_counter()
    helpers = build()  # noqa: F841  (kept alive through the run)
    setup_s = time.perf_counter() - t0
    run_s = lena.run(SIM_S)
    records = lena.deliveries()
    lena.emit(
        {
            "case": "A",
            "spec": "docs/ns3-spec.md A (two-cell handover)",
            "sim_s": SIM_S,
            "wall_s": {"import": round(lena.IMPORT_S, 3), "setup": round(setup_s, 3),
                       "run": round(run_s, 3)},
            "handover_count": sum(1 for e in lena.sinks.Handovers() if e.kind == 0),
            "handovers": handovers(records),
            "tcp_mbps_mean": round(lena.mbps(records, TCP_START_S, SIM_S), 3),
            "tcp_bytes": sum(b for _, b in records),
            "bin_s": BIN_S,
            "tcp_mbps_bins": lena.bins_mbps(records, BIN_S, SIM_S),
        }
    )


if __name__ == "__main__":
    main()
