"""Case C of docs/ns3-spec.md: tcran's reference scenario
(scenarios/reference.toml) in ns-3 LENA, for the wall-clock comparison of
scripts/speed.sh (issue 31). Prints one JSON object; `wall_s.run` is the
simulation alone (`Simulator::Run`), the figure speed.sh compares.

    $NS3_VENV/bin/python scripts/ns3/speed.py [SIM_S]   (default 60)
"""

from __future__ import annotations

import sys
import time

import lena
from lena import ns

# ns3-spec C: one cell of 25 RB (5 MHz), one UE close enough to the eNB for
# CQI 15 throughout (LENA has no fixed-MCS channel: its AMC picks the MCS
# from the CQI; 20 m under LENA's default Friis loss is ~60 dB over
# the noise), a CUBIC bulk download and a G.711 call, both downlink, 5 MB
# RLC buffer (RLC AM, tcran's default mode), 60 s.
BANDWIDTH_RB = 25
UE_DISTANCE_M = 20.0
RLC_BUFFER_B = 5_000_000
SIM_S = 60.0
# tcran's defaults for what the reference scenario leaves unset: 10 ms core
# delay, 1448-byte segments, 4 MiB send buffer, 6 MB receive window.
CORE_DELAY_MS = 10.0
SEGMENT_B = 1448
SEND_BUFFER_B = 4 * 1024 * 1024
RECEIVE_BUFFER_B = 6_000_000
# G.711 at 20 ms: 160 bytes of speech + 12 of RTP per packet (the UDP and
# IP headers are added below it), 50 packets/s: tcran's `voip` flow.
VOIP_PAYLOAD_B = 172
VOIP_INTERVAL_MS = 20
BULK_PORT = 9000
VOIP_PORT = 9001
# tcran's UE is connected at 0 s; LENA's attaches through (ideal) RRC in
# its first tens of ms, and a SYN sent before that is lost and retried only
# after ns-3's 3 s connection timeout. Both flows start once it is attached.
START_S = 0.1


def build(sim_s: float):
    """Returns the VoIP server and the helpers, which must outlive the run:
    the EPC helper's destructor disposes of the PGW node, and Python would
    collect it when build() returns."""
    lena.tcp_defaults(SEGMENT_B, SEND_BUFFER_B, RECEIVE_BUFFER_B)
    ns.Config.SetDefault("ns3::LteEnbRrc::EpsBearerToRlcMapping", ns.StringValue("RlcAmAlways"))
    ns.Config.SetDefault("ns3::LteRlcAm::MaxTxBufferSize", ns.UintegerValue(RLC_BUFFER_B))

    lte = ns.CreateObject[ns.LteHelper]()
    epc, server, _ = lena.epc_with_server(lte, CORE_DELAY_MS)
    lte.SetEnbDeviceAttribute("DlBandwidth", ns.UintegerValue(BANDWIDTH_RB))
    lte.SetEnbDeviceAttribute("UlBandwidth", ns.UintegerValue(BANDWIDTH_RB))

    enbs = ns.NodeContainer()
    enbs.Create(1)
    ues = ns.NodeContainer()
    ues.Create(1)
    positions = ns.CreateObject[ns.ListPositionAllocator]()
    positions.Add(ns.Vector(0.0, 0.0, 0.0))
    positions.Add(ns.Vector(UE_DISTANCE_M, 0.0, 0.0))
    mobility = ns.MobilityHelper()
    mobility.SetMobilityModel("ns3::ConstantPositionMobilityModel")
    mobility.SetPositionAllocator(positions)
    mobility.Install(enbs)
    mobility.Install(ues)

    enb_devs = lte.InstallEnbDevice(enbs)
    ue_devs = lte.InstallUeDevice(ues)
    lena.ues_on_epc(epc, ues, ue_devs)
    lte.Attach(ue_devs.Get(0), enb_devs.Get(0))
    ue = ues.Get(0)
    ue_addr = ue.GetObject[ns.Ipv4]().GetAddress(1, 0).GetLocal()

    any_addr = ns.Ipv4Address.GetAny()
    bulk_sink = ns.PacketSinkHelper("ns3::TcpSocketFactory",
                                    ns.InetSocketAddress(any_addr, BULK_PORT).ConvertTo())
    bulk_sink_app = bulk_sink.Install(ue).Get(0)
    bulk = ns.BulkSendHelper("ns3::TcpSocketFactory",
                             ns.InetSocketAddress(ue_addr, BULK_PORT).ConvertTo())
    bulk.SetAttribute("MaxBytes", ns.UintegerValue(0))
    bulk.SetAttribute("SendSize", ns.UintegerValue(SEGMENT_B))
    bulk.Install(server).Start(ns.Seconds(START_S))

    voip_sink = ns.UdpServerHelper(VOIP_PORT)
    voip_server = voip_sink.Install(ue).Get(0).GetObject[ns.UdpServer]()
    voip = ns.UdpClientHelper(ue_addr.ConvertTo(), VOIP_PORT)
    voip.SetAttribute("PacketSize", ns.UintegerValue(VOIP_PAYLOAD_B))
    voip.SetAttribute("Interval", ns.TimeValue(ns.MilliSeconds(VOIP_INTERVAL_MS)))
    voip.SetAttribute("MaxPackets", ns.UintegerValue(int(sim_s * 1000 / VOIP_INTERVAL_MS) + 1))
    voip.Install(server).Start(ns.Seconds(START_S))

    assert lena.sinks.RecordDeliveries(bulk_sink_app)
    return voip_server, (lte, epc)


def main() -> None:
    sim_s = float(sys.argv[1]) if len(sys.argv) > 1 else SIM_S
    t0 = time.perf_counter()
    voip_server, helpers = build(sim_s)  # helpers: kept alive through the run
    setup_s = time.perf_counter() - t0
    run_s = lena.run_only(sim_s)
    voip_packets = int(voip_server.GetReceived())
    ns.Simulator.Destroy()
    bulk = lena.deliveries()
    lena.emit(
        {
            "case": "C",
            "spec": "docs/ns3-spec.md C (speed, tcran's scenarios/reference.toml)",
            "sim_s": sim_s,
            "wall_s": {"import": round(lena.IMPORT_S, 3), "setup": round(setup_s, 3),
                       "run": round(run_s, 3)},
            "bulk_mbps": round(lena.mbps(bulk, START_S, sim_s), 3),
            "voip_packets": voip_packets,
        }
    )


if __name__ == "__main__":
    main()
