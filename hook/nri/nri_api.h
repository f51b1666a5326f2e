/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Short names for the NRI messages that protoc-c generates from NRI's
 * api.proto (package nri.pkg.api.v1alpha1; scripts/nri-protos.sh says
 * where the .proto comes from) and for the ttrpc envelope.
 */
#ifndef SH_NRI_API_H
#define SH_NRI_API_H

#include "nri/api.pb-c.h"
#include "nri/request.pb-c.h"

#define NRI_SERVICE_PLUGIN "nri.pkg.api.v1alpha1.Plugin"
#define NRI_SERVICE_RUNTIME "nri.pkg.api.v1alpha1.Runtime"

typedef Nri__Pkg__Api__V1alpha1__PodSandbox nri_pod;
typedef Nri__Pkg__Api__V1alpha1__PodSandbox__AnnotationsEntry nri_pod_annotation;
typedef Nri__Pkg__Api__V1alpha1__Container nri_container;
typedef Nri__Pkg__Api__V1alpha1__Container__AnnotationsEntry
	nri_container_annotation;
typedef Nri__Pkg__Api__V1alpha1__ContainerAdjustment nri_adjustment;
typedef Nri__Pkg__Api__V1alpha1__ContainerAdjustment__AnnotationsEntry
	nri_adjustment_annotation;
typedef Nri__Pkg__Api__V1alpha1__Hooks nri_hooks;
typedef Nri__Pkg__Api__V1alpha1__Hook nri_hook;

/* Event numbers (enum Event); a subscription sets bit (event - 1). */
#define NRI_EVENT_BIT(e) (1 << ((e)-1))

#endif /* SH_NRI_API_H */
