// E2SM-RC's recursive RAN parameter types (O-RAN.WG3.E2SM-RC-v01.03
// clause 9.3, `asn1/e2sm-rc-v01.03.asn`), written by hand in the form
// hampi generates the others, because hampi 0.7 cannot resolve a
// recursive type (build.rs). Each item follows its ASN.1 assignment,
// quoted above it; the cycles go through SEQUENCE OF (a `Vec`), so every
// type has a finite size.

// RANParameter-Definition ::= SEQUENCE {
//     ranParameter-Definition-Choice RANParameter-Definition-Choice, ... }
#[derive(asn1_codecs_derive::AperCodec, Debug, Clone, PartialEq)]
#[asn(type = "SEQUENCE", extensible = true)]
pub struct RANParameter_Definition {
    pub ran_parameter_definition_choice: RANParameter_Definition_Choice,
}

// RANParameter-Definition-Choice ::= CHOICE {
//     choiceLIST RANParameter-Definition-Choice-LIST,
//     choiceSTRUCTURE RANParameter-Definition-Choice-STRUCTURE, ... }
#[derive(asn1_codecs_derive::AperCodec, Debug, Clone, PartialEq)]
#[asn(type = "CHOICE", lb = "0", ub = "1", extensible = true)]
pub enum RANParameter_Definition_Choice {
    #[asn(key = 0, extended = false)]
    ChoiceLIST(RANParameter_Definition_Choice_LIST),
    #[asn(key = 1, extended = false)]
    ChoiceSTRUCTURE(RANParameter_Definition_Choice_STRUCTURE),
}

// RANParameter-Definition-Choice-LIST ::= SEQUENCE {
//     ranParameter-List SEQUENCE (SIZE(1..maxnoofItemsinList)) OF
//         RANParameter-Definition-Choice-LIST-Item, ... }
#[derive(asn1_codecs_derive::AperCodec, Debug, Clone, PartialEq)]
#[asn(type = "SEQUENCE", extensible = true)]
pub struct RANParameter_Definition_Choice_LIST {
    pub ran_parameter_list: RANParameter_Definition_Choice_LISTRanParameter_List,
}

#[derive(asn1_codecs_derive::AperCodec, Debug, Clone, PartialEq)]
#[asn(type = "SEQUENCE-OF", sz_extensible = false, sz_lb = "1", sz_ub = "65535")]
pub struct RANParameter_Definition_Choice_LISTRanParameter_List(
    pub Vec<RANParameter_Definition_Choice_LIST_Item>,
);

// RANParameter-Definition-Choice-LIST-Item ::= SEQUENCE {
//     ranParameter-ID RANParameter-ID, ranParameter-name RANParameter-Name,
//     ranParameter-Definition RANParameter-Definition OPTIONAL, ... }
#[derive(asn1_codecs_derive::AperCodec, Debug, Clone, PartialEq)]
#[asn(type = "SEQUENCE", extensible = true, optional_fields = 1)]
pub struct RANParameter_Definition_Choice_LIST_Item {
    pub ran_parameter_id: RANParameter_ID,
    pub ran_parameter_name: RANParameter_Name,
    #[asn(optional_idx = 0)]
    pub ran_parameter_definition: Option<RANParameter_Definition>,
}

// RANParameter-Definition-Choice-STRUCTURE ::= SEQUENCE {
//     ranParameter-STRUCTURE SEQUENCE (SIZE(1..maxnoofParametersinStructure))
//         OF RANParameter-Definition-Choice-STRUCTURE-Item, ... }
#[derive(asn1_codecs_derive::AperCodec, Debug, Clone, PartialEq)]
#[asn(type = "SEQUENCE", extensible = true)]
pub struct RANParameter_Definition_Choice_STRUCTURE {
    pub ran_parameter_structure: RANParameter_Definition_Choice_STRUCTURERanParameter_STRUCTURE,
}

#[derive(asn1_codecs_derive::AperCodec, Debug, Clone, PartialEq)]
#[asn(type = "SEQUENCE-OF", sz_extensible = false, sz_lb = "1", sz_ub = "65535")]
pub struct RANParameter_Definition_Choice_STRUCTURERanParameter_STRUCTURE(
    pub Vec<RANParameter_Definition_Choice_STRUCTURE_Item>,
);

// RANParameter-Definition-Choice-STRUCTURE-Item ::= SEQUENCE {
//     ranParameter-ID RANParameter-ID, ranParameter-name RANParameter-Name,
//     ranParameter-Definition RANParameter-Definition OPTIONAL, ... }
#[derive(asn1_codecs_derive::AperCodec, Debug, Clone, PartialEq)]
#[asn(type = "SEQUENCE", extensible = true, optional_fields = 1)]
pub struct RANParameter_Definition_Choice_STRUCTURE_Item {
    pub ran_parameter_id: RANParameter_ID,
    pub ran_parameter_name: RANParameter_Name,
    #[asn(optional_idx = 0)]
    pub ran_parameter_definition: Option<RANParameter_Definition>,
}

// RANParameter-ValueType ::= CHOICE {
//     ranP-Choice-ElementTrue RANParameter-ValueType-Choice-ElementTrue,
//     ranP-Choice-ElementFalse RANParameter-ValueType-Choice-ElementFalse,
//     ranP-Choice-Structure RANParameter-ValueType-Choice-Structure,
//     ranP-Choice-List RANParameter-ValueType-Choice-List, ... }
#[derive(asn1_codecs_derive::AperCodec, Debug, Clone, PartialEq)]
#[asn(type = "CHOICE", lb = "0", ub = "3", extensible = true)]
pub enum RANParameter_ValueType {
    #[asn(key = 0, extended = false)]
    RanP_Choice_ElementTrue(RANParameter_ValueType_Choice_ElementTrue),
    #[asn(key = 1, extended = false)]
    RanP_Choice_ElementFalse(RANParameter_ValueType_Choice_ElementFalse),
    #[asn(key = 2, extended = false)]
    RanP_Choice_Structure(RANParameter_ValueType_Choice_Structure),
    #[asn(key = 3, extended = false)]
    RanP_Choice_List(RANParameter_ValueType_Choice_List),
}

// RANParameter-ValueType-Choice-Structure ::= SEQUENCE {
//     ranParameter-Structure RANParameter-STRUCTURE, ... }
#[derive(asn1_codecs_derive::AperCodec, Debug, Clone, PartialEq)]
#[asn(type = "SEQUENCE", extensible = true)]
pub struct RANParameter_ValueType_Choice_Structure {
    pub ran_parameter_structure: RANParameter_STRUCTURE,
}

// RANParameter-ValueType-Choice-List ::= SEQUENCE {
//     ranParameter-List RANParameter-LIST, ... }
#[derive(asn1_codecs_derive::AperCodec, Debug, Clone, PartialEq)]
#[asn(type = "SEQUENCE", extensible = true)]
pub struct RANParameter_ValueType_Choice_List {
    pub ran_parameter_list: RANParameter_LIST,
}

// RANParameter-STRUCTURE ::= SEQUENCE {
//     sequence-of-ranParameters SEQUENCE (SIZE(1..maxnoofParametersinStructure))
//         OF RANParameter-STRUCTURE-Item OPTIONAL, ... }
#[derive(asn1_codecs_derive::AperCodec, Debug, Clone, PartialEq)]
#[asn(type = "SEQUENCE", extensible = true, optional_fields = 1)]
pub struct RANParameter_STRUCTURE {
    #[asn(optional_idx = 0)]
    pub sequence_of_ran_parameters: Option<RANParameter_STRUCTURESequence_of_ranParameters>,
}

#[derive(asn1_codecs_derive::AperCodec, Debug, Clone, PartialEq)]
#[asn(type = "SEQUENCE-OF", sz_extensible = false, sz_lb = "1", sz_ub = "65535")]
pub struct RANParameter_STRUCTURESequence_of_ranParameters(pub Vec<RANParameter_STRUCTURE_Item>);

// RANParameter-STRUCTURE-Item ::= SEQUENCE {
//     ranParameter-ID RANParameter-ID,
//     ranParameter-valueType RANParameter-ValueType, ... }
#[derive(asn1_codecs_derive::AperCodec, Debug, Clone, PartialEq)]
#[asn(type = "SEQUENCE", extensible = true)]
pub struct RANParameter_STRUCTURE_Item {
    pub ran_parameter_id: RANParameter_ID,
    pub ran_parameter_value_type: RANParameter_ValueType,
}

// RANParameter-LIST ::= SEQUENCE {
//     list-of-ranParameter SEQUENCE (SIZE(1..maxnoofItemsinList)) OF
//         RANParameter-STRUCTURE, ... }
#[derive(asn1_codecs_derive::AperCodec, Debug, Clone, PartialEq)]
#[asn(type = "SEQUENCE", extensible = true)]
pub struct RANParameter_LIST {
    pub list_of_ran_parameter: RANParameter_LISTList_of_ranParameter,
}

#[derive(asn1_codecs_derive::AperCodec, Debug, Clone, PartialEq)]
#[asn(type = "SEQUENCE-OF", sz_extensible = false, sz_lb = "1", sz_ub = "65535")]
pub struct RANParameter_LISTList_of_ranParameter(pub Vec<RANParameter_STRUCTURE>);

// RANParameter-Testing ::= SEQUENCE (SIZE(1..maxnoofRANparamTest)) OF
//     RANParameter-Testing-Item
#[derive(asn1_codecs_derive::AperCodec, Debug, Clone, PartialEq)]
#[asn(type = "SEQUENCE-OF", sz_extensible = false, sz_lb = "1", sz_ub = "255")]
pub struct RANParameter_Testing(pub Vec<RANParameter_Testing_Item>);

// RANParameter-Testing-Item ::= SEQUENCE {
//     ranParameter-ID RANParameter-ID,
//     ranParameter-Type CHOICE {
//         ranP-Choice-List RANParameter-Testing-Item-Choice-List,
//         ranP-Choice-Structure RANParameter-Testing-Item-Choice-Structure,
//         ranP-Choice-ElementTrue RANParameter-Testing-Item-Choice-ElementTrue,
//         ranP-Choice-ElementFalse RANParameter-Testing-Item-Choice-ElementFalse,
//         ... }, ... }
#[derive(asn1_codecs_derive::AperCodec, Debug, Clone, PartialEq)]
#[asn(type = "SEQUENCE", extensible = true)]
pub struct RANParameter_Testing_Item {
    pub ran_parameter_id: RANParameter_ID,
    pub ran_parameter_type: RANParameter_Testing_ItemRanParameter_Type,
}

#[derive(asn1_codecs_derive::AperCodec, Debug, Clone, PartialEq)]
#[asn(type = "CHOICE", lb = "0", ub = "3", extensible = true)]
pub enum RANParameter_Testing_ItemRanParameter_Type {
    #[asn(key = 0, extended = false)]
    RanP_Choice_List(RANParameter_Testing_Item_Choice_List),
    #[asn(key = 1, extended = false)]
    RanP_Choice_Structure(RANParameter_Testing_Item_Choice_Structure),
    #[asn(key = 2, extended = false)]
    RanP_Choice_ElementTrue(RANParameter_Testing_Item_Choice_ElementTrue),
    #[asn(key = 3, extended = false)]
    RanP_Choice_ElementFalse(RANParameter_Testing_Item_Choice_ElementFalse),
}

// RANParameter-Testing-Item-Choice-List ::= SEQUENCE {
//     ranParameter-List RANParameter-Testing-LIST, ... }
#[derive(asn1_codecs_derive::AperCodec, Debug, Clone, PartialEq)]
#[asn(type = "SEQUENCE", extensible = true)]
pub struct RANParameter_Testing_Item_Choice_List {
    pub ran_parameter_list: RANParameter_Testing_LIST,
}

// RANParameter-Testing-Item-Choice-Structure ::= SEQUENCE {
//     ranParameter-Structure RANParameter-Testing-STRUCTURE, ... }
#[derive(asn1_codecs_derive::AperCodec, Debug, Clone, PartialEq)]
#[asn(type = "SEQUENCE", extensible = true)]
pub struct RANParameter_Testing_Item_Choice_Structure {
    pub ran_parameter_structure: RANParameter_Testing_STRUCTURE,
}

// RANParameter-Testing-LIST ::= SEQUENCE (SIZE(1..maxnoofItemsinList)) OF
//     RANParameter-Testing-Item
#[derive(asn1_codecs_derive::AperCodec, Debug, Clone, PartialEq)]
#[asn(type = "SEQUENCE-OF", sz_extensible = false, sz_lb = "1", sz_ub = "65535")]
pub struct RANParameter_Testing_LIST(pub Vec<RANParameter_Testing_Item>);

// RANParameter-Testing-STRUCTURE ::= SEQUENCE
//     (SIZE(1..maxnoofParametersinStructure)) OF RANParameter-Testing-Item
#[derive(asn1_codecs_derive::AperCodec, Debug, Clone, PartialEq)]
#[asn(type = "SEQUENCE-OF", sz_extensible = false, sz_lb = "1", sz_ub = "65535")]
pub struct RANParameter_Testing_STRUCTURE(pub Vec<RANParameter_Testing_Item>);

// The SEQUENCEs with one extension addition that tcran reads or writes
// (their codec: `sequence_with_one_addition!`, src/asn.rs): the
// RAN parameter items whose definition is one (`...,
// ranParameter-Definition RANParameter-Definition OPTIONAL`) and the gNB
// UE id (`..., globalNG-RANNode-ID GlobalNGRANNodeID OPTIONAL`). Without
// it the definition of every structured parameter would be lost (FlexRIC's
// RAN function definition has one) and FlexRIC's UE ids would change bytes.
macro_rules! item_with_definition_addition {
    ($name:ident { $($field:ident : $ty:ty),* }) => {
        sequence_with_one_addition!($name {
            $($field: $ty),* ;
            ;
            addition ran_parameter_definition: RANParameter_Definition
        });
    };
}

// UEID-GNB ::= SEQUENCE { amf-UE-NGAP-ID, guami,
//     gNB-CU-UE-F1AP-ID-List OPTIONAL, gNB-CU-CP-UE-E1AP-ID-List OPTIONAL,
//     ran-UEID OPTIONAL, m-NG-RAN-UE-XnAP-ID OPTIONAL, globalGNB-ID OPTIONAL,
//     ..., globalNG-RANNode-ID GlobalNGRANNodeID OPTIONAL }
sequence_with_one_addition!(UEID_GNB {
    amf_ue_ngap_id: AMF_UE_NGAP_ID,
    guami: GUAMI;
    optional gnb_cu_ue_f1ap_id_list: UEID_GNB_CU_F1AP_ID_List,
    optional gnb_cu_cp_ue_e1ap_id_list: UEID_GNB_CU_CP_E1AP_ID_List,
    optional ran_ueid: RANUEID,
    optional m_ng_ran_ue_xn_ap_id: NG_RANnodeUEXnAPID,
    optional global_gnb_id: GlobalGNB_ID;
    addition global_ng_ran_node_id: GlobalNGRANNodeID
});

// UEID-NG-ENB ::= SEQUENCE { amf-UE-NGAP-ID, guami,
//     ngENB-CU-UE-W1AP-ID OPTIONAL, m-NG-RAN-UE-XnAP-ID OPTIONAL,
//     globalNgENB-ID OPTIONAL, ..., globalNG-RANNode-ID OPTIONAL }
sequence_with_one_addition!(UEID_NG_ENB {
    amf_ue_ngap_id: AMF_UE_NGAP_ID,
    guami: GUAMI;
    optional ng_e_nb_cu_ue_w1ap_id: NGENB_CU_UE_W1AP_ID,
    optional m_ng_ran_ue_xn_ap_id: NG_RANnodeUEXnAPID,
    optional global_ng_enb_id: GlobalNgENB_ID;
    addition global_ng_ran_node_id: GlobalNGRANNodeID
});

item_with_definition_addition!(E2SM_RC_ActionDefinition_Format1_Item {
    ran_parameter_id: RANParameter_ID
});
item_with_definition_addition!(E2SM_RC_ActionDefinition_Format3_Item {
    ran_parameter_id: RANParameter_ID
});
item_with_definition_addition!(E2SM_RC_ActionDefinition_Format4_RANP_Item {
    ran_parameter_id: RANParameter_ID
});
item_with_definition_addition!(L2Parameters_RANParameter_Item {
    ran_parameter_id: RANParameter_ID,
    ran_parameter_name: RANParameter_Name
});
item_with_definition_addition!(UEIdentification_RANParameter_Item {
    ran_parameter_id: RANParameter_ID,
    ran_parameter_name: RANParameter_Name
});
item_with_definition_addition!(CellIdentification_RANParameter_Item {
    ran_parameter_id: RANParameter_ID,
    ran_parameter_name: RANParameter_Name
});
item_with_definition_addition!(CallProcessBreakpoint_RANParameter_Item {
    ran_parameter_id: RANParameter_ID,
    ran_parameter_name: RANParameter_Name
});
item_with_definition_addition!(Report_RANParameter_Item {
    ran_parameter_id: RANParameter_ID,
    ran_parameter_name: RANParameter_Name
});
item_with_definition_addition!(InsertIndication_RANParameter_Item {
    ran_parameter_id: RANParameter_ID,
    ran_parameter_name: RANParameter_Name
});
item_with_definition_addition!(ControlOutcome_RANParameter_Item {
    ran_parameter_id: RANParameter_ID,
    ran_parameter_name: RANParameter_Name
});
item_with_definition_addition!(ControlAction_RANParameter_Item {
    ran_parameter_id: RANParameter_ID,
    ran_parameter_name: RANParameter_Name
});
item_with_definition_addition!(PolicyAction_RANParameter_Item {
    ran_parameter_id: RANParameter_ID,
    ran_parameter_name: RANParameter_Name
});
item_with_definition_addition!(PolicyCondition_RANParameter_Item {
    ran_parameter_id: RANParameter_ID,
    ran_parameter_name: RANParameter_Name
});
