/** What the demo gives the kit's `messages` option. */
import type { KitMessagesInput } from 'hosted-sms-verify-kit';
import type { DemoLocale } from './texts.ts';

const SERVER_PROBLEM_FR =
  'La vérification n’a pas pu aboutir à cause d’un problème de notre côté. Rien n’a été modifié ; réessayez plus ' +
  'tard.';
const START_AGAIN_FR = 'Recommencez depuis la page d’où vous venez.';

/** The kit's messages in the demo: English with the demo's wording, and a complete French set. */
export const demoKitMessages: Record<DemoLocale, KitMessagesInput> = {
  en: {
    failures: {
      otp_locked: {
        title: 'Too many incorrect codes',
        text:
          'The code was entered incorrectly too many times, so this verification was locked. Nothing was changed. ' +
          'You can start a new verification with a new code.',
      },
      device_changed: {
        title: 'Verification moved to another device',
        text:
          'The verification was continued on a different device or browser than the one it started on, so it was ' +
          'stopped for your safety. Nothing was changed; start again on this device.',
      },
      session_binding_failed: {
        title: 'Verification could not be tied to this browser',
        text:
          'The verification page could not confirm it was opened from this browser (for example, from a copied ' +
          'link). Nothing was changed; start again from this site.',
      },
      expired: {
        title: 'This verification expired',
        text: 'The verification was not finished in time, so nothing was changed. You can start a new one.',
      },
      generic: {
        title: 'Verification failed',
        text: 'The verification did not succeed, so nothing was changed. You can start a new one.',
      },
    },
    pending: {
      stopped:
        'The verification service has not confirmed the result yet. You do not need to wait: if you entered the ' +
        'code, the change is applied in the background within a few minutes and appears under Activity.',
    },
  },
  fr: {
    lang: 'fr',
    dir: 'ltr',
    startNew: 'Commencer une nouvelle vérification',
    nothingChanged: 'Rien n’a été modifié.',
    handoff: {
      title: 'Continuer vers la vérification',
      text: 'Vous êtes redirigé vers la page de vérification. Si rien ne se passe, appuyez sur Continuer.',
      continue: 'Continuer',
    },
    codeGoesTo: (maskedNumber) => `Le code est envoyé au numéro se terminant par ${maskedNumber}.`,
    enterNumber: {
      title: 'Saisissez votre numéro de téléphone',
      label: 'Numéro de téléphone',
      hint: 'Nous enverrons un code par SMS à ce numéro. Hors de votre pays, commencez par + et l’indicatif du pays.',
      send: 'M’envoyer un code',
    },
    complete: {
      title: 'Vérification terminée',
      text:
        'Cette vérification a été traitée. Si vous l’avez lancée, connectez-vous au compte depuis lequel vous l’avez ' +
        'lancée pour voir le résultat.',
    },
    failures: {
      otp_locked: {
        title: 'Trop de codes incorrects',
        text:
          'Le code a été saisi incorrectement trop de fois, cette vérification a donc été verrouillée. Rien n’a été ' +
          'modifié. Vous pouvez lancer une nouvelle vérification avec un nouveau code.',
      },
      device_changed: {
        title: 'Vérification poursuivie sur un autre appareil',
        text:
          'La vérification a été poursuivie sur un autre appareil ou navigateur que celui où elle a commencé ; elle ' +
          'a été arrêtée pour votre sécurité. Recommencez sur cet appareil.',
      },
      session_binding_failed: {
        title: 'La vérification n’a pas pu être liée à ce navigateur',
        text:
          'La page de vérification n’a pas pu confirmer qu’elle avait été ouverte depuis ce navigateur (par exemple ' +
          'depuis un lien copié). Recommencez depuis ce site.',
      },
      expired: {
        title: 'Cette vérification a expiré',
        text:
          'La vérification n’a pas été terminée à temps, rien n’a donc été modifié. Vous pouvez en lancer une ' +
          'nouvelle.',
      },
      superseded: {
        title: 'Une demande plus récente a remplacé celle-ci',
        text:
          'Vous avez confirmé une demande plus récente du même type, et c’est celle-ci qui a été appliquée. ' +
          'Cette demande plus ancienne ne sera jamais appliquée.',
      },
      generic: {
        title: 'La vérification a échoué',
        text: 'La vérification n’a pas abouti, rien n’a donc été modifié. Vous pouvez en lancer une nouvelle.',
      },
    },
    pending: {
      title: 'Confirmation de votre vérification',
      waiting:
        'En attente de la confirmation du service de vérification. Appuyez sur Vérifier à nouveau dans quelques ' +
        'secondes pour voir le résultat.',
      checking:
        'En attente de la confirmation du service de vérification. Cette page vérifie à nouveau d’elle-même toutes ' +
        'les quelques secondes.',
      stoppedTitle: 'Confirmation toujours en cours',
      stopped:
        'Le service de vérification n’a pas encore confirmé le résultat. Inutile d’attendre ici : si vous avez ' +
        'saisi le code, la modification sera appliquée en arrière-plan d’ici quelques minutes et apparaîtra dans ' +
        'Activité.',
      resultReady: 'Le résultat est arrivé. Affichage en cours.',
      checkAgain: 'Vérifier à nouveau',
    },
    startAgain: {
      title: 'Recommencer la vérification',
      heading: 'Cette page de vérification a déjà été utilisée',
      text:
        'Pour votre sécurité, une page de vérification ne s’ouvre qu’une seule fois. Lancez une nouvelle ' +
        'vérification pour continuer.',
    },
    error: { title: 'Problème de vérification', heading: 'Un problème est survenu pendant la vérification' },
    errors: {
      invalid_options: SERVER_PROBLEM_FR,
      mounted_at_wrong_path: SERVER_PROBLEM_FR,
      not_signed_in: 'Connectez-vous pour continuer.',
      csrf_failed: 'Le formulaire a expiré ou n’a pas été envoyé depuis ce site ; rechargez la page et réessayez.',
      unknown_action:
        'Cette demande de vérification ne correspond à aucune action connue ; revenez en arrière et réessayez.',
      invalid_action_params: 'Le formulaire n’a pas pu être accepté ; revenez en arrière, vérifiez-le et réessayez.',
      invalid_phone_number:
        'Ce numéro ne peut pas recevoir de SMS. Vérifiez-le ; pour un numéro d’un autre pays, commencez par + et son indicatif.',
      phone_number_refused: 'Nous ne pouvons pas envoyer de code à ce numéro. Saisissez un autre numéro de mobile.',
      stored_number_refused:
        'Nous ne pouvons pas envoyer de code au numéro de téléphone de votre compte. Changez ce numéro dans votre ' +
        'compte, ou contactez l’assistance.',
      kept_number_refused:
        'Nous ne pouvons pas envoyer de code au numéro utilisé par cette vérification. Saisissez un autre numéro de mobile.',
      rate_limited: 'Trop de tentatives de vérification.',
      invalid_return_params: `Ce lien de vérification est incomplet ou mal formé. ${START_AGAIN_FR}`,
      unknown_attempt: `Aucune tentative de vérification ne correspond à ce lien. ${START_AGAIN_FR}`,
      session_mismatch: `Ce lien n’appartient pas à la vérification qu’il désigne. ${START_AGAIN_FR}`,
      service_response_mismatch: 'La vérification n’a pas pu être confirmée, rien n’a donc été modifié. Recommencez.',
      service_unavailable: 'Le service de vérification est injoignable pour le moment. Réessayez dans un instant.',
      service_busy:
        "Le service de vérification est très sollicité. Rien n'a été envoyé ni décompté ; réessayez dans un instant.",
      service_rejected: SERVER_PROBLEM_FR,
      service_protocol_error: SERVER_PROBLEM_FR,
      fulfil_failed: SERVER_PROBLEM_FR,
      hook_failed: SERVER_PROBLEM_FR,
      step_up_intent_unusable:
        'Cette demande a déjà été effectuée, a expiré ou a été commencée dans un autre navigateur. Rien n’a été modifié.',
      step_up_intent_sent_elsewhere:
        'Cette demande a déjà été envoyée depuis un autre onglet ou une autre fenêtre : continuez-y. Rien n’a été modifié ici.',
      step_up_intent_other_resource:
        'Cette demande a été faite pour un autre compte ou espace de travail que celui ouvert maintenant. Revenez-y ' +
        'pour la confirmer. Rien n’a été modifié.',
      step_up_upload_refused:
        'Ce formulaire ne peut pas être confirmé avec un fichier joint. Envoyez-le sans le fichier, ou ajoutez le fichier après avoir confirmé.',
      store_unavailable: 'Impossible de terminer pour le moment. Réessayez dans un instant.',
      method_not_allowed: 'Une vérification se lance en envoyant un formulaire (POST), pas en ouvrant un lien.',
      client_error: 'Cette requête n’a pas pu être acceptée ; revenez en arrière et réessayez.',
      server_error: SERVER_PROBLEM_FR,
    },
    retryAfter: (seconds) =>
      seconds < 90 ? `Réessayez dans ${seconds} secondes.` : `Réessayez dans ${Math.ceil(seconds / 60)} minutes.`,
    stepUp: {
      title: 'Confirmez que c’est bien vous',
      text: (maskedNumber) =>
        `Pour continuer, confirmez que c’est bien vous avec un code envoyé par SMS à votre numéro ${maskedNumber}, ou avec votre clé d’accès si vous en avez créé une.`,
      purpose: (label) => `Vous avez demandé à : ${label}.`,
      send: 'M’envoyer un code',
      tooOld:
        'Votre confirmation a pris plus de temps que cette page ne le permet ; elle ne peut pas servir ici. Confirmez à nouveau pour continuer.',
      otherResource:
        'Votre confirmation concernait autre chose ; elle ne peut pas servir ici. Confirmez à nouveau pour continuer.',
      confirmTitle: 'Confirmez votre demande',
      confirmText: (label) =>
        `Vous avez confirmé que c’est bien vous. Confirmez maintenant que vous voulez : ${label}.`,
      confirmPrompt: (label) => `Confirmez que vous voulez : ${label}.`,
      confirm: 'Confirmer',
      fromElsewhere: 'Vous arrivez d’un autre site. Continuez sur ce site pour confirmer que c’est bien vous.',
      continue: 'Continuer',
      unenrolledTitle: 'Un numéro de téléphone est nécessaire',
      unusableTitle: 'Cette demande n’est plus ouverte',
      unenrolled:
        'Cette page demande une confirmation par SMS, et votre compte n’a pas encore de numéro de téléphone. Ajoutez-en un, puis réessayez.',
    },
  },
};
