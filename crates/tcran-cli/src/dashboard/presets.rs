//! The pipelines the page deploys with one click: the TC-RAN paper's
//! (FQ-CoDel + 5G-BDP, priority + e5G-BDP, flow slicing with a shaper)
//! and L4S DualQ, as TOML files beside this module, shown in the page's
//! editor as they are.

use tcran_tc::PipelineConfig;

/// One preset: its name (what the page's button says) and its TOML.
#[derive(Debug, Clone, Copy, serde::Serialize)]
pub struct Preset {
    pub name: &'static str,
    pub toml: &'static str,
}

/// Every preset, in the page's order.
pub const PRESETS: [Preset; 4] = [
    Preset {
        name: "fq_codel+5g-bdp",
        toml: include_str!("presets/fq_codel+5g-bdp.toml"),
    },
    Preset {
        name: "priority+e5g-bdp",
        toml: include_str!("presets/priority+e5g-bdp.toml"),
    },
    Preset {
        name: "slicing+shaper",
        toml: include_str!("presets/slicing+shaper.toml"),
    },
    Preset {
        name: "l4s-dualq",
        toml: include_str!("presets/l4s-dualq.toml"),
    },
];

/// The preset called `name`, built; an unknown name's error lists the
/// known ones.
pub fn pipeline(name: &str) -> Result<PipelineConfig, String> {
    let p = PRESETS.iter().find(|p| p.name == name).ok_or_else(|| {
        format!(
            "preset {name:?}: no such preset (presets: {})",
            PRESETS.map(|p| p.name).join(", ")
        )
    })?;
    toml::from_str(p.toml).map_err(|e| format!("preset {name}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preset_builds() {
        for p in PRESETS {
            let c = pipeline(p.name).unwrap();
            c.build()
                .unwrap_or_else(|e| panic!("preset {}: {e}", p.name));
        }
    }

    #[test]
    fn the_fq_codel_preset_is_the_demo_variant() {
        // The demo's `fq_codel+5g-bdp` variant is the pipeline the page's
        // button deploys: the live story ends where the report's does.
        let demo: toml::Value = toml::from_str(crate::simulate::DEMO).unwrap();
        let variant = demo["variants"]
            .as_array()
            .unwrap()
            .iter()
            .find(|v| v["name"].as_str() == Some("fq_codel+5g-bdp"))
            .unwrap();
        let from_demo: PipelineConfig = variant["pipeline"].clone().try_into().unwrap();
        assert_eq!(pipeline("fq_codel+5g-bdp").unwrap(), from_demo);
    }

    #[test]
    fn an_unknown_preset_lists_the_known_ones() {
        let e = pipeline("fq_codle").unwrap_err();
        assert!(e.contains("fq_codel+5g-bdp, priority+e5g-bdp"), "{e}");
    }
}
