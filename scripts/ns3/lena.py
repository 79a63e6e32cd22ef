"""What the three LENA programs of scripts/ns3/ share: the measurement sinks
(C++, compiled by the bindings' cppyy at start), the EPC with a server behind
it, and the JSON they print.

The sinks are C++ because an ns-3 trace source calls a C++ callback for every
packet: a Python callback through cppyy would cost more than the simulation
itself and distort the speed comparison of case C. Python only builds the
scenario (as an ns-3 user's script would) and reads the sinks at the end.

Runs in the venv of scripts/ns3/setup.sh (`make ns3`), ns3==3.44.post0.
"""

from __future__ import annotations

import json
import os
import sys
import time

_T_IMPORT = time.perf_counter()
from ns import ns  # noqa: E402  (the import is timed: it compiles the bindings)

IMPORT_S = time.perf_counter() - _T_IMPORT

ns.cppyy.cppdef(
    r"""
#include <algorithm>
#include <cstdint>
#include <vector>

namespace tcran_ns3
{
using namespace ns3;

// Every TCP/UDP payload a sink application received: time (ns) and bytes.
// Binning and the windows around a handover are worked out in Python from
// these, so one record serves every figure.
struct Deliveries
{
    std::vector<int64_t> t_ns;
    std::vector<uint32_t> bytes;
};

static Deliveries g_deliveries;

static void
OnSinkRx(Ptr<const Packet> p, const Address&)
{
    g_deliveries.t_ns.push_back(Simulator::Now().GetNanoSeconds());
    g_deliveries.bytes.push_back(p->GetSize());
}

// A PacketSink's "Rx" (one sink per program: the TCP flow's).
bool
RecordDeliveries(Ptr<Application> sink)
{
    return sink->TraceConnectWithoutContext("Rx", MakeCallback(&OnSinkRx));
}

Deliveries&
TcpDeliveries()
{
    return g_deliveries;
}

// RRC handover events, UE side and eNB side (lte-ue-rrc.cc, lte-enb-rrc.cc).
struct HandoverEvent
{
    int64_t t_ns;
    int kind; // 0 UE start, 1 UE end ok, 2 eNB start (source), 3 eNB end ok (target), 4 UE end error
    uint16_t cell;
    uint16_t target;
};

static std::vector<HandoverEvent> g_handovers;

static void
OnUeHoStart(uint64_t, uint16_t cell, uint16_t, uint16_t target)
{
    g_handovers.push_back({Simulator::Now().GetNanoSeconds(), 0, cell, target});
}

static void
OnUeHoEndOk(uint64_t, uint16_t cell, uint16_t)
{
    g_handovers.push_back({Simulator::Now().GetNanoSeconds(), 1, cell, cell});
}

static void
OnEnbHoStart(uint64_t, uint16_t cell, uint16_t, uint16_t target)
{
    g_handovers.push_back({Simulator::Now().GetNanoSeconds(), 2, cell, target});
}

static void
OnEnbHoEndOk(uint64_t, uint16_t cell, uint16_t)
{
    g_handovers.push_back({Simulator::Now().GetNanoSeconds(), 3, cell, cell});
}

static void
OnUeHoEndError(uint64_t, uint16_t cell, uint16_t)
{
    g_handovers.push_back({Simulator::Now().GetNanoSeconds(), 4, cell, cell});
}

void
RecordHandovers()
{
    Config::ConnectWithoutContextFailSafe("/NodeList/*/DeviceList/*/LteUeRrc/HandoverStart",
                                          MakeCallback(&OnUeHoStart));
    Config::ConnectWithoutContextFailSafe("/NodeList/*/DeviceList/*/LteUeRrc/HandoverEndOk",
                                          MakeCallback(&OnUeHoEndOk));
    Config::ConnectWithoutContextFailSafe("/NodeList/*/DeviceList/*/LteUeRrc/HandoverEndError",
                                          MakeCallback(&OnUeHoEndError));
    Config::ConnectWithoutContextFailSafe("/NodeList/*/DeviceList/*/LteEnbRrc/HandoverStart",
                                          MakeCallback(&OnEnbHoStart));
    Config::ConnectWithoutContextFailSafe("/NodeList/*/DeviceList/*/LteEnbRrc/HandoverEndOk",
                                          MakeCallback(&OnEnbHoEndOk));
}

std::vector<HandoverEvent>&
Handovers()
{
    return g_handovers;
}

// Ping round trips (Ping's "Rtt" source: sequence number, RTT).
static std::vector<double> g_rtt_ms;
static std::vector<int64_t> g_rtt_t_ns;

static void
OnRtt(uint16_t, Time rtt)
{
    g_rtt_t_ns.push_back(Simulator::Now().GetNanoSeconds());
    g_rtt_ms.push_back(rtt.GetSeconds() * 1e3);
}

bool
RecordRtts(Ptr<Application> ping)
{
    return ping->TraceConnectWithoutContext("Rtt", MakeCallback(&OnRtt));
}

std::vector<double>&
RttsMs()
{
    return g_rtt_ms;
}

std::vector<int64_t>&
RttTimesNs()
{
    return g_rtt_t_ns;
}

// The UE's RLC buffer: LENA has no trace of it, but every RLC entity tells
// its MAC its buffer (txQueueSize + retxQueueSize + statusPduSize, TS 36.321
// 5.4.5 BSR input) through the MAC SAP. A tap between the UE's DRB RLC and
// the UE MAC keeps the last value and passes everything on unchanged.
class BufferTap : public LteMacSapProvider
{
  public:
    LteMacSapProvider* inner = nullptr;
    uint64_t bytes = 0;

    void TransmitPdu(TransmitPduParameters params) override
    {
        inner->TransmitPdu(params);
    }

    void ReportBufferStatus(ReportBufferStatusParameters params) override
    {
        bytes = uint64_t(params.txQueueSize) + params.retxQueueSize + params.statusPduSize;
        inner->ReportBufferStatus(params);
    }
};

static BufferTap g_tap;
static std::vector<uint64_t> g_buffer_samples;
static std::vector<int64_t> g_buffer_t_ns;

static void
SampleBuffer(Time period)
{
    g_buffer_t_ns.push_back(Simulator::Now().GetNanoSeconds());
    g_buffer_samples.push_back(g_tap.bytes);
    Simulator::Schedule(period, &SampleBuffer, period);
}

// Taps the UE's data radio bearers (there is one: the default bearer) once
// RRC has set them up, then samples the reported buffer every `period`
// (1 ms: LTE's TTI, so the median is over the same per-slot samples as
// tcran's).
static void
TapUeRlc(Ptr<NetDevice> dev, Time period)
{
    Ptr<LteUeNetDevice> ue = dev->GetObject<LteUeNetDevice>();
    ObjectMapValue drbs;
    ue->GetRrc()->GetAttribute("DataRadioBearerMap", drbs);
    NS_ABORT_MSG_IF(drbs.GetN() != 1, "the UE has " << drbs.GetN() << " DRBs, 1 expected");
    for (auto it = drbs.Begin(); it != drbs.End(); ++it)
    {
        Ptr<LteDataRadioBearerInfo> drb = it->second->GetObject<LteDataRadioBearerInfo>();
        g_tap.inner = ue->GetMac()->GetLteMacSapProvider();
        drb->m_rlc->SetLteMacSapProvider(&g_tap);
    }
    SampleBuffer(period);
}

void
RecordUeBuffer(Ptr<NetDevice> dev, Time at, Time period)
{
    Simulator::Schedule(at, &TapUeRlc, dev, period);
}

std::vector<uint64_t>&
BufferSamples()
{
    return g_buffer_samples;
}

std::vector<int64_t>&
BufferTimesNs()
{
    return g_buffer_t_ns;
}

} // namespace tcran_ns3
"""
)

sinks = ns.cppyy.gbl.tcran_ns3


def deliveries() -> list[tuple[float, int]]:
    """(time s, payload bytes) of every packet the TCP sink received."""
    d = sinks.TcpDeliveries()
    return [(t * 1e-9, b) for t, b in zip(d.t_ns, d.bytes)]


def mbps(records: list[tuple[float, int]], t0: float, t1: float) -> float:
    """Goodput over [t0, t1) in Mbit/s."""
    return sum(b for t, b in records if t0 <= t < t1) * 8 / (t1 - t0) / 1e6


def bins_mbps(records: list[tuple[float, int]], bin_s: float, end_s: float) -> list[float]:
    """Goodput per bin of `bin_s` from 0 to `end_s`, in Mbit/s."""
    n = round(end_s / bin_s)
    acc = [0] * n
    for t, b in records:
        i = int(t / bin_s)
        if i < n:
            acc[i] += b
    return [round(a * 8 / bin_s / 1e6, 3) for a in acc]


def percentile(values: list[float], q: float) -> float | None:
    """Nearest-rank percentile (q in [0, 100]), None for no values."""
    if not values:
        return None
    s = sorted(values)
    k = max(0, min(len(s) - 1, -(-len(s) * q // 100) - 1))
    return s[int(k)]


def epc_with_server(lte, core_delay_ms: float):
    """LENA's EPC (PointToPointEpcHelper) and one server host behind the
    PGW over a link of `core_delay_ms` one way (ns3-spec: "a server 10 ms
    (one way) behind the core"), fast enough never to be the bottleneck.
    Returns (epc, server node, server address)."""
    epc = ns.CreateObject[ns.PointToPointEpcHelper]()
    lte.SetEpcHelper(epc)
    pgw = epc.GetPgwNode()
    servers = ns.NodeContainer()
    servers.Create(1)
    server = servers.Get(0)
    ns.InternetStackHelper().Install(servers)
    p2p = ns.PointToPointHelper()
    p2p.SetDeviceAttribute("DataRate", ns.DataRateValue(ns.DataRate("100Gb/s")))
    p2p.SetDeviceAttribute("Mtu", ns.UintegerValue(1500))
    p2p.SetChannelAttribute("Delay", ns.TimeValue(ns.MilliSeconds(core_delay_ms)))
    devs = p2p.Install(pgw, server)
    ipv4 = ns.Ipv4AddressHelper()
    ipv4.SetBase(ns.Ipv4Address("1.0.0.0"), ns.Ipv4Mask("255.0.0.0"))
    ifaces = ipv4.Assign(devs)
    routing = ns.Ipv4StaticRoutingHelper()
    route = routing.GetStaticRouting(server.GetObject[ns.Ipv4]())
    route.AddNetworkRouteTo(ns.Ipv4Address("7.0.0.0"), ns.Ipv4Mask("255.0.0.0"), 1)
    return epc, server, ifaces.GetAddress(1)


def ues_on_epc(epc, ue_nodes, ue_devs) -> None:
    """IP stack, address and default route of the UEs (LENA's lena-simple-epc
    recipe)."""
    ns.InternetStackHelper().Install(ue_nodes)
    epc.AssignUeIpv4Address(ns.NetDeviceContainer(ue_devs))
    routing = ns.Ipv4StaticRoutingHelper()
    for i in range(ue_nodes.GetN()):
        route = routing.GetStaticRouting(ue_nodes.Get(i).GetObject[ns.Ipv4]())
        route.SetDefaultRoute(epc.GetUeDefaultGatewayAddress(), 1)


def tcp_defaults(segment: int, send_buffer: int, receive_buffer: int) -> None:
    """CUBIC with the given segment and socket buffers for every TCP socket."""
    ns.Config.SetDefault("ns3::TcpL4Protocol::SocketType", ns.StringValue("ns3::TcpCubic"))
    ns.Config.SetDefault("ns3::TcpSocket::SegmentSize", ns.UintegerValue(segment))
    ns.Config.SetDefault("ns3::TcpSocket::SndBufSize", ns.UintegerValue(send_buffer))
    ns.Config.SetDefault("ns3::TcpSocket::RcvBufSize", ns.UintegerValue(receive_buffer))


# The CPU time of the last run (`time.process_time`: ns-3 runs on one
# thread): on a shared machine a steadier figure than the wall time.
run_cpu_s = 0.0


def run_only(stop_s: float) -> float:
    """Runs the simulation to `stop_s` and returns its wall time; the
    objects live on for the caller to read (then `ns.Simulator.Destroy()`)."""
    global run_cpu_s
    ns.Simulator.Stop(ns.Seconds(stop_s))
    t0, c0 = time.perf_counter(), time.process_time()
    ns.Simulator.Run()
    run_cpu_s = time.process_time() - c0
    return time.perf_counter() - t0


def run(stop_s: float) -> float:
    """Runs the simulation to `stop_s`; returns the wall time of the run."""
    wall = run_only(stop_s)
    ns.Simulator.Destroy()
    return wall


def emit(result: dict) -> None:
    """The program's one line of output, then the end of the process.

    The exit skips the interpreter's teardown: it would dispose of the ns-3
    objects Python still holds, and 3.44's Ping then dies in the report it
    prints from DoDispose (a floating-point exception, seen in case B),
    after the results, with a failing exit code."""
    result.setdefault("ns3", "3.44.post0")
    result.setdefault("run_cpu_s", round(run_cpu_s, 3))
    json.dump(result, sys.stdout, sort_keys=True)
    sys.stdout.write("\n")
    sys.stdout.flush()
    os._exit(0)
