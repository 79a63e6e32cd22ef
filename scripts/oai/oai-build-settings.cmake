# Build settings `make oai` gives OAI's cmake (CMAKE_PROJECT_INCLUDE), so
# that no OAI file is edited for them.
#
# 99 % of OAI's 11,000 build steps compile generated ASN.1 code (RRC, F1AP,
# NGAP, ...). At -O2 -g that costs about 80 minutes on two cores; at -O0 -g0
# the whole build takes about 20. The ASN.1 codecs run once per signalling
# message, never per packet, so their speed does not matter here.
get_property(tcran_settings_done GLOBAL PROPERTY TCRAN_OAI_SETTINGS)
if(NOT tcran_settings_done)
  set_property(GLOBAL PROPERTY TCRAN_OAI_SETTINGS TRUE)
  function(tcran_asn1_without_optimisation)
    foreach(lib asn1_nr_rrc asn1_lte_rrc asn1_x2ap asn1_e1ap asn1_m2ap asn1_xnap
                asn1_f1ap asn1_nrppa asn1_lpp asn1_s1ap asn1_m3ap asn1_ngap)
      if(TARGET ${lib})
        set_property(TARGET ${lib} APPEND PROPERTY COMPILE_OPTIONS -O0 -g0)
      endif()
    endforeach()
  endfunction()
  cmake_language(DEFER DIRECTORY ${CMAKE_SOURCE_DIR} CALL tcran_asn1_without_optimisation)
endif()
