#!/usr/bin/env python3
"""E2SM-TCRAN golden vectors from an encoder that is not tcran's.

Encodes E2SM-TCRAN messages that address uplink DRBs (`DrbRef`'s
`direction`, an extension addition) or carry a UE's handover margin
(`LowerLayerKpis`' `handoverMargin`, another) with asn1tools' ALIGNED PER codec
(PyPI `asn1tools`, MIT; X.691 written independently of hampi, tcran's
codec) from the module in crates/tcran-e2/asn1/e2sm-tcran-v1.asn, and
writes them to crates/tcran-e2/tests/data/e2sm-tcran-vectors.json, which
`tests/integration/uplink.rs` decodes and re-encodes byte for byte.

    pip install asn1tools==0.169.0
    python3 scripts/e2sm-tcran-vectors.py          # rewrites the file
    python3 scripts/e2sm-tcran-vectors.py --check  # exit 1 if it differs
"""
import json
import pathlib
import sys

import asn1tools

ROOT = pathlib.Path(__file__).resolve().parent.parent
SPEC = ROOT / "crates/tcran-e2/asn1/e2sm-tcran-v1.asn"
OUT = ROOT / "crates/tcran-e2/tests/data/e2sm-tcran-vectors.json"

UL = {"rnti": 0x4601, "drb": 1, "direction": "uplink"}
DL = {"rnti": 0x4601, "drb": 1}

REPORT = {
    "drb": UL,
    "totals": {
        "inPackets": 1200, "inBytes": 1_800_000, "outPackets": 1100,
        "outBytes": 1_650_000, "droppedPackets": 39, "droppedBytes": 58_500,
        "queuedPackets": 61, "queuedBytes": 91_500,
    },
    "classifier": {"classified": 1200, "defaulted": 0, "missingQueue": 0, "malformed": 0},
    "queues": [{
        "id": 0, "kind": "codel",
        "backlogPackets": 61, "backlogBytes": 91_500,
        "offeredPackets": 1200, "offeredBytes": 1_800_000,
        "forwardedPackets": 1100, "forwardedBytes": 1_650_000,
        "drops": [{"reason": "codel", "count": 39}],
        "marks": [],
        "redirectedOut": 0, "movedInPackets": 0,
        "avgSojournUs": 12_500, "lastSojournUs": 4_000,
        "aqm": {"dropping": False, "count": 3},
    }],
    "scheduler": "drr",
    "pacer": {"kind": "static", "bandwidthBps": 4_960_000, "allowanceBytes": 0,
              "limit": 20_000, "refused": 7},
    "lower": {"rlcBacklogBytes": 19_876, "rlcBacklogSdus": 14, "rlcSojournUs": 31_000,
              "rlcTxBytes": 1_630_000, "macTxBytes": 1_640_000, "macPrbs": 25_000, "mcs": 10},
}

# A downlink DRB's report whose UE's measurement reports put its strongest
# neighbour 4.12 dB below its serving cell (`LowerLayerKpis`'
# `handoverMargin`, an extension addition, in 0.01 dB).
MARGIN_REPORT = dict(REPORT, drb=DL, lower=dict(REPORT["lower"], handoverMargin=-412))

VECTORS = [
    ("TcControlHeader", "control header, uplink DRB 1 of UE 0x4601", {"drb": UL}),
    ("TcControlHeader", "control header, downlink DRB 1 of UE 0x4601 (the first edition's bytes)", {"drb": DL}),
    ("TcActionDefinition", "action definition: downlink DRB 1, uplink DRB 1", {"drbs": [DL, UL]}),
    ("TcRanFunctionDefinition", "RAN function definition: DRB 1 both ways",
     {"name": "TCRAN-TC", "version": 1, "drbs": [DL, UL]}),
    ("TcIndicationMessage", "indication message: one uplink DRB's report", {"reports": [REPORT]}),
    ("TcIndicationMessage", "handover margin: one downlink DRB's report with its UE's margin",
     {"reports": [MARGIN_REPORT]}),
]


def vectors():
    codec = asn1tools.compile_files(str(SPEC), "per")
    out = []
    for ty, what, value in VECTORS:
        out.append({"type": ty, "what": what, "aper_hex": codec.encode(ty, value).hex()})
    return out


def main():
    text = json.dumps({
        "generator": f"asn1tools {asn1tools.__version__}, ALIGNED PER (codec 'per'), scripts/e2sm-tcran-vectors.py",
        "vectors": vectors(),
    }, indent=1) + "\n"
    if "--check" in sys.argv:
        sys.exit(0 if OUT.read_text() == text else 1)
    OUT.write_text(text)


if __name__ == "__main__":
    main()
