"""Case B of docs/ns3-spec.md: uplink bufferbloat in ns-3 LENA, one TCP
upload and a ping from the same UE (issue 28). Prints one JSON object.

    $NS3_VENV/bin/python scripts/ns3/uplink.py    (make ns3-compare)
"""

from __future__ import annotations

import time

import lena
from lena import ns

# ns3-spec B: one cell, 20 MHz = 100 RB, FDD (LENA is FDD only); the site
# as in case A (25 m, 43 dBm, EARFCN 100), the UE static 100 m away, 1.5 m
# high; TR 38.901 UMa, LOS always, no shadowing: a high, steady MCS.
SITE_HEIGHT_M = 25.0
ENB_TX_POWER_DBM = 43.0
DL_EARFCN = 100
UL_EARFCN = 18100
BANDWIDTH_RB = 100
UE_DISTANCE_M = 100.0
UE_HEIGHT_M = 1.5
# A power class 3 UE (TS 36.101 6.2.2: 23 dBm); LENA's default is 10 dBm.
UE_TX_POWER_DBM = 23.0
# ns3-spec B: a CUBIC upload to a server 10 ms behind the core from 1 s, a
# ping (56-byte payload, every 100 ms) to the same server from 2 s; 30 s.
CORE_DELAY_MS = 10.0
TCP_START_S = 1.0
PING_START_S = 2.0
PING_INTERVAL_MS = 100
PING_PAYLOAD_B = 56
SIM_S = 30.0
PINGS = int((SIM_S - PING_START_S) * 1000 / PING_INTERVAL_MS)
SEGMENT_B = 1448
SEND_BUFFER_B = 4 * 1024 * 1024
RECEIVE_BUFFER_B = 6_000_000
# ns3-spec B: the UE's RLC transmit buffer 5 MB; RLC AM on both sides (the
# mode LENA's X2 and tcran's default share, and the one of case A).
RLC_BUFFER_B = 5_000_000
# ns3-spec B: throughput as the mean over 5-30 s; the buffer sampled per TTI.
MEAN_FROM_S = 5.0
BUFFER_SAMPLE_MS = 1
PORT = 9000


def build():
    """Returns the helpers, which must outlive the run: the EPC helper's
    destructor disposes of the PGW node, and Python would collect it when
    build() returns."""
    lena.tcp_defaults(SEGMENT_B, SEND_BUFFER_B, RECEIVE_BUFFER_B)
    ns.Config.SetDefault("ns3::LteEnbRrc::EpsBearerToRlcMapping", ns.StringValue("RlcAmAlways"))
    ns.Config.SetDefault("ns3::LteRlcAm::MaxTxBufferSize", ns.UintegerValue(RLC_BUFFER_B))
    ns.Config.SetDefault("ns3::LteEnbPhy::TxPower", ns.DoubleValue(ENB_TX_POWER_DBM))
    ns.Config.SetDefault("ns3::LteUePhy::TxPower", ns.DoubleValue(UE_TX_POWER_DBM))

    lte = ns.CreateObject[ns.LteHelper]()
    epc, server, server_addr = lena.epc_with_server(lte, CORE_DELAY_MS)
    lte.SetAttribute("PathlossModel", ns.StringValue("ns3::ThreeGppUmaPropagationLossModel"))
    lte.SetPathlossModelAttribute("ShadowingEnabled", ns.BooleanValue(False))
    always_los = ns.CreateObject[ns.AlwaysLosChannelConditionModel]()
    lte.SetPathlossModelAttribute("ChannelConditionModel", ns.PointerValue(always_los))
    lte.SetEnbDeviceAttribute("DlEarfcn", ns.UintegerValue(DL_EARFCN))
    lte.SetEnbDeviceAttribute("UlEarfcn", ns.UintegerValue(UL_EARFCN))
    lte.SetEnbDeviceAttribute("DlBandwidth", ns.UintegerValue(BANDWIDTH_RB))
    lte.SetEnbDeviceAttribute("UlBandwidth", ns.UintegerValue(BANDWIDTH_RB))

    enbs = ns.NodeContainer()
    enbs.Create(1)
    ues = ns.NodeContainer()
    ues.Create(1)
    positions = ns.CreateObject[ns.ListPositionAllocator]()
    positions.Add(ns.Vector(0.0, 0.0, SITE_HEIGHT_M))
    positions.Add(ns.Vector(UE_DISTANCE_M, 0.0, UE_HEIGHT_M))
    mobility = ns.MobilityHelper()
    mobility.SetMobilityModel("ns3::ConstantPositionMobilityModel")
    mobility.SetPositionAllocator(positions)
    mobility.Install(enbs)
    mobility.Install(ues)

    enb_devs = lte.InstallEnbDevice(enbs)
    ue_devs = lte.InstallUeDevice(ues)
    lena.ues_on_epc(epc, ues, ue_devs)
    lte.Attach(ue_devs.Get(0), enb_devs.Get(0))

    sink = ns.PacketSinkHelper("ns3::TcpSocketFactory",
                               ns.InetSocketAddress(ns.Ipv4Address.GetAny(), PORT).ConvertTo())
    sink_app = sink.Install(server).Get(0)
    upload = ns.BulkSendHelper("ns3::TcpSocketFactory",
                               ns.InetSocketAddress(server_addr, PORT).ConvertTo())
    upload.SetAttribute("MaxBytes", ns.UintegerValue(0))
    upload.SetAttribute("SendSize", ns.UintegerValue(SEGMENT_B))
    upload.Install(ues.Get(0)).Start(ns.Seconds(TCP_START_S))

    ping = ns.PingHelper(server_addr.ConvertTo())
    ping.SetAttribute("Interval", ns.TimeValue(ns.MilliSeconds(PING_INTERVAL_MS)))
    ping.SetAttribute("Size", ns.UintegerValue(PING_PAYLOAD_B))
    ping.SetAttribute("VerboseMode", ns.StringValue("Silent"))
    # Ping reserves its table of outstanding requests for Count entries:
    # the default (unbounded) fails, so the run's number of pings is given.
    ping.SetAttribute("Count", ns.UintegerValue(PINGS))
    ping_app = ping.Install(ues.Get(0)).Get(0)
    ping_app.SetStartTime(ns.Seconds(PING_START_S))

    assert lena.sinks.RecordDeliveries(sink_app)
    assert lena.sinks.RecordRtts(ping_app)
    # The default bearer exists well before the upload starts (ideal RRC
    # connects in tens of ms).
    lena.sinks.RecordUeBuffer(ue_devs.Get(0), ns.Seconds(TCP_START_S / 2),
                              ns.MilliSeconds(BUFFER_SAMPLE_MS))
    return lte, epc


def main() -> None:
    t0 = time.perf_counter()
    helpers = build()  # noqa: F841  (kept alive through the run)
    setup_s = time.perf_counter() - t0
    run_s = lena.run(SIM_S)
    records = lena.deliveries()
    rtts = list(lena.sinks.RttsMs())
    buffer = [b for t, b in zip(lena.sinks.BufferTimesNs(), lena.sinks.BufferSamples())
              if t * 1e-9 >= MEAN_FROM_S]
    lena.emit(
        {
            "case": "B",
            "spec": "docs/ns3-spec.md B (uplink bufferbloat)",
            "sim_s": SIM_S,
            "rlc_mode": "am",
            "wall_s": {"import": round(lena.IMPORT_S, 3), "setup": round(setup_s, 3),
                       "run": round(run_s, 3)},
            "upload_mbps_5_30s": round(lena.mbps(records, MEAN_FROM_S, SIM_S), 3),
            "ping_count": len(rtts),
            "ping_sent": PINGS,
            "ping_rtt_ms_p50": lena.percentile(rtts, 50),
            "ping_rtt_ms_p95": lena.percentile(rtts, 95),
            "ue_rlc_bytes_p50_5_30s": lena.percentile(buffer, 50),
            "ue_rlc_bytes_max": max(buffer) if buffer else None,
            "bin_s": 1.0,
            "upload_mbps_bins": lena.bins_mbps(records, 1.0, SIM_S),
        }
    )


if __name__ == "__main__":
    main()
